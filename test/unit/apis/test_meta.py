"""apis.meta: accessors, controller refs, deep copy, time helpers, label and field selectors."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from apis import meta
from apis.resources import GroupVersionKind

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "ns",
        "generateName": "p-",
        "uid": "u1",
        "resourceVersion": "7",
        "generation": 3,
        "labels": {"app": "a"},
        "annotations": {"k": "v"},
        "finalizers": ["f"],
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "X", "name": "o1", "uid": "x1"},
            {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "name": "d", "uid": "d1", "controller": True},
        ],
        "deletionTimestamp": "2026-01-02T03:04:05Z",
        "creationTimestamp": "2026-01-01T00:00:00Z",
    },
}

ACCESSORS_EMPTY = [
    (meta.namespace, ""), (meta.name, ""), (meta.generate_name, ""), (meta.uid, ""), (meta.resource_version, ""),
    (meta.generation, 0), (meta.labels, {}), (meta.annotations, {}), (meta.finalizers, []),
    (meta.owner_references, []), (meta.deletion_timestamp, None), (meta.creation_timestamp, None),
    (meta.get_controller_of, None), (meta.metadata, {}),
]


@pytest.mark.parametrize("obj", [None, {}, {"metadata": None}, {"metadata": "junk"}, "not a dict",
                                 {"metadata": {"labels": None, "annotations": None, "name": None}}])
@pytest.mark.parametrize(("accessor", "empty"), ACCESSORS_EMPTY)
def test_accessors_on_objects_without_metadata(obj, accessor, empty):
    if accessor is meta.metadata and isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
        empty = obj["metadata"]
    assert accessor(obj) == empty


def test_accessors_read_metadata():
    assert (meta.namespace(POD), meta.name(POD), meta.generate_name(POD), meta.uid(POD)) == ("ns", "p", "p-", "u1")
    assert (meta.resource_version(POD), meta.generation(POD)) == ("7", 3)
    assert meta.labels(POD) == {"app": "a"} and meta.annotations(POD) == {"k": "v"}
    assert meta.finalizers(POD) == ["f"] and len(meta.owner_references(POD)) == 2
    assert meta.deletion_timestamp(POD) == "2026-01-02T03:04:05Z"
    assert meta.creation_timestamp(POD) == "2026-01-01T00:00:00Z"


def test_cluster_scoped_object_has_no_namespace():
    node = {"kind": "Node", "metadata": {"name": "n1"}}
    assert meta.namespace(node) == "" and meta.name(node) == "n1"


def test_list_accessors_return_copies():
    meta.finalizers(POD).append("x")
    meta.owner_references(POD).clear()
    assert meta.finalizers(POD) == ["f"] and len(meta.owner_references(POD)) == 2


def test_get_controller_of_and_is_controlled_by():
    assert meta.get_controller_of(POD)["uid"] == "d1"
    assert meta.is_controlled_by(POD, {"metadata": {"uid": "d1"}})
    assert not meta.is_controlled_by(POD, {"metadata": {"uid": "x1"}})
    no_controller = {"metadata": {"ownerReferences": [{"uid": "x", "controller": False}]}}
    assert meta.get_controller_of(no_controller) is None


def test_new_controller_ref_forms():
    owner = {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d", "uid": "d1"}}
    expected = {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "name": "d", "uid": "d1",
                "controller": True, "blockOwnerDeletion": True}
    assert meta.new_controller_ref(owner) == expected
    assert meta.new_controller_ref(owner, GroupVersionKind("sedna.io", "v1alpha1", "Dataset")) == expected
    assert meta.new_controller_ref(owner, ("sedna.io/v1alpha1", "Dataset")) == expected
    core = meta.new_controller_ref({"metadata": {"name": "p", "uid": "u"}}, GroupVersionKind("", "v1", "Pod"))
    assert core["apiVersion"] == "v1"


def test_new_controller_ref_errors():
    with pytest.raises(ValueError, match="apiVersion and kind"):
        meta.new_controller_ref({"metadata": {"name": "d", "uid": "u"}})
    with pytest.raises(ValueError, match="metadata.name and metadata.uid"):
        meta.new_controller_ref({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "d"}})


def test_deep_copy_is_independent():
    copy = meta.deep_copy(POD)
    assert copy == POD and copy is not POD
    copy["metadata"]["labels"]["app"] = "changed"
    copy["metadata"]["ownerReferences"][0]["name"] = "changed"
    assert POD["metadata"]["labels"]["app"] == "a"
    assert POD["metadata"]["ownerReferences"][0]["name"] == "o1"
    assert meta.deep_copy([1, "x", None, True, 1.5]) == [1, "x", None, True, 1.5]


# -- time ------------------------------------------------------------------------------------------------------


def test_format_time_is_utc_seconds():
    dt = datetime(2026, 1, 2, 5, 4, 5, 999, tzinfo=timezone(timedelta(hours=2)))
    assert meta.format_time(dt) == "2026-01-02T03:04:05Z"
    assert meta.format_time(datetime(2026, 1, 2, 3, 4, 5)) == "2026-01-02T03:04:05Z"  # naive = UTC


def test_now_rfc3339_round_trips():
    now = meta.now_rfc3339()
    assert now.endswith("Z") and len(now) == 20
    assert meta.format_time(meta.parse_time(now)) == now


def test_now_rfc3339_follows_the_clock_second_by_second(monkeypatch: pytest.MonkeyPatch):
    clock = [1767323045.2]  # 2026-01-02T03:04:05.2Z
    monkeypatch.setattr(meta.time, "time", lambda: clock[0])
    assert meta.now_rfc3339() == "2026-01-02T03:04:05Z"
    clock[0] += 0.7
    assert meta.now_rfc3339() == "2026-01-02T03:04:05Z"
    clock[0] += 0.2
    assert meta.now_rfc3339() == "2026-01-02T03:04:06Z"
    clock[0] -= 3600  # the clock stepped back: the text follows it
    assert meta.now_rfc3339() == "2026-01-02T02:04:06Z"


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
    ("2026-01-02T03:04:05.250000Z", datetime(2026, 1, 2, 3, 4, 5, 250000, tzinfo=timezone.utc)),
    ("2026-01-02T05:04:05+02:00", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
    ("2026-01-02T03:04:05", datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)),
])
def test_parse_time(text, expected):
    assert meta.parse_time(text) == expected


@pytest.mark.parametrize("bad", ["", None, "yesterday", "2026-13-01T00:00:00Z", 12])
def test_parse_time_rejects_bad_input(bad):
    with pytest.raises(ValueError, match="invalid timestamp"):
        meta.parse_time(bad)


# -- label selectors ---------------------------------------------------------------------------------------------

LABELS = {"app": "web", "tier": "front", "n": "5", "x/y": "1"}


@pytest.mark.parametrize(("text", "matches"), [
    ("app=web", True), ("app==web", True), ("app=db", False), ("app!=db", True), ("app!=web", False),
    ("missing!=x", True), ("app in (db,web)", True), ("app in (db)", False), ("app notin (db)", True),
    ("app notin (web,db)", False), ("missing notin (x)", True), ("app", True), ("missing", False),
    ("!missing", True), ("!app", False), ("n>4", True), ("n>5", False), ("n<6", True), ("app>1", False),
    ("missing<9", False), ("x/y=1", True), (" app = web ,  tier in ( front ) ", True), ("app=web,tier=back", False),
    ("", True), ("missing=", False),
])
def test_parse_selector_operators(text, matches):
    assert meta.parse_selector(text).matches(LABELS) is matches


def test_selector_structure_and_string():
    sel = meta.parse_selector("a=b,c in (e,d),!f,g,h>1,i<2,j!=k,l notin (m)")
    assert [(r.key, r.operator, r.values) for r in sel.requirements] == [
        ("a", "=", ("b",)), ("c", "in", ("d", "e")), ("f", "!", ()), ("g", "exists", ()), ("h", "gt", ("1",)),
        ("i", "lt", ("2",)), ("j", "!=", ("k",)), ("l", "notin", ("m",))]
    assert str(sel) == "a=b,c in (d,e),!f,g,h>1,i<2,j!=k,l notin (m)"
    assert str(meta.parse_selector(str(sel))) == str(sel)


@pytest.mark.parametrize(("text", "values"), [
    ("a in ()", ("",)), ("a notin ( )", ("",)), ("a in (x,)", ("", "x")), ("a in (,x)", ("", "x")),
    ("a in (x,,y)", ("", "x", "y")), ("a in (,)", ("",)), ("a in (a,,a,,a,,)", ("", "a")),
    ("a in (x,y,notin, z,in)", ("in", "notin", "x", "y", "z")), ("a in (y,x,y)", ("x", "y")),
])
def test_value_sets_parse_like_apimachinery(text, values):
    [req] = meta.parse_selector(text).requirements
    assert req.values == values
    assert meta.parse_selector(text).matches({"a": values[0]}) is (req.operator == "in")


def test_in_and_notin_are_identifiers_outside_the_operator_position():
    # apimachinery's parser reads "in"/"notin" as plain identifiers where a key or value is expected
    assert meta.parse_selector("notin=in").matches({"notin": "in"})
    assert [(r.key, r.operator) for r in meta.parse_selector("in").requirements] == [("in", "exists")]
    assert meta.parse_selector("a=notin").matches({"a": "notin"})


@pytest.mark.parametrize(("label", "matches"), [
    ("10", True), ("+10", True), ("-10", False), ("5", False), ("1_0", False), (" 10", False), ("10 ", False),
    ("\u0661\u0660", False), ("0x10", False), ("", False), ("99999999999999999999", False),
    ("9223372036854775807", True),
])
def test_gt_matches_label_values_parsed_like_go_parse_int(label, matches):
    assert meta.parse_selector("a>5").matches({"a": label}) is matches


def test_string_is_sorted_by_key_like_go():
    assert str(meta.parse_selector("z=1,a=2,m in (c,b)")) == "a=2,m in (b,c),z=1"
    assert [r.key for r in meta.parse_selector("z,!b,a>1").requirements] == ["a", "b", "z"]
    hand_built = meta.Selector((meta.Requirement("z", "exists"), meta.Requirement("a", "!")))
    assert str(hand_built) == "!a,z"
    assert str(meta.parse_selector("x=,z= ")) == "x=,z="  # apimachinery's own round-trip cases
    assert str(meta.parse_selector("x in ()")) == "x in ()"
    lbl = meta.selector_from_label_selector({"matchLabels": {"z": "1"},
                                              "matchExpressions": [{"key": "a", "operator": "Exists"}]})
    assert [r.key for r in lbl.requirements] == ["a", "z"]


def test_empty_selectors():
    assert meta.parse_selector(None).empty() and meta.parse_selector("  ").matches({})
    assert meta.everything().matches(None)
    assert not meta.nothing().matches({}) and not meta.nothing().empty()


@pytest.mark.parametrize(("text", "problem"), [
    ("a=b,", "trailing ','"),
    ("a in (x", "missing '\\)'"),
    ("a in (x,y", "missing '\\)'"),
    ("a in (", "missing '\\)'"),
    ("a in (x,=)", "expected ',' or a value"),
    ("!a=b", "expected ',' after '!a'"),
    ("a>-1", "invalid label value '-1'"),
    ("a>+5", "invalid label value '\\+5'"),
    ("a>1_0", "integer value"),
    ("a>99999999999999999999", "integer value"),
    ("a=b,!", "expected a key after '!'"),
    ("a\fb", "invalid label key"),
    ("a in x", "expected '\\('"),
    ("a in (x y)", "expected ',' or '\\)'"),
    ("-bad=b", "invalid label key '-bad'"),
    ("a=b-", "invalid label value 'b-'"),
    ("a=" + "v" * 64, "invalid label value"),
    ("k" * 64 + "=v", "invalid label key"),
    ("a ~ b", "unknown operator '~'"),
    ("a>b", "integer value"),
    ("!", "expected a key after '!'"),
    ("a=b c", "expected ','"),
    (",", "expected a key"),
    ("a,,b", "expected a key"),
])
def test_selector_syntax_errors(text, problem):
    with pytest.raises(ValueError, match=problem) as info:
        meta.parse_selector(text)
    assert repr(text) in str(info.value)


def test_selector_from_set():
    sel = meta.selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel.matches({"a": "1", "b": "2", "c": "3"}) and not sel.matches({"a": "1"})
    assert meta.selector_from_set(None).matches({}) and meta.selector_from_set({}).empty()
    with pytest.raises(ValueError, match="invalid label value"):
        meta.selector_from_set({"a": "bad value"})


def test_selector_from_label_selector():
    assert not meta.selector_from_label_selector(None).matches({"a": "1"})
    assert meta.selector_from_label_selector({}).matches({"a": "1"})
    sel = meta.selector_from_label_selector({
        "matchLabels": {"app": "web"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "back"]},
                             {"key": "env", "operator": "NotIn", "values": ["prod"]},
                             {"key": "n", "operator": "Exists"},
                             {"key": "legacy", "operator": "DoesNotExist"}],
    })
    assert sel.matches(LABELS)
    assert not sel.matches({**LABELS, "legacy": "1"})
    assert not sel.matches({**LABELS, "tier": "mid"})


@pytest.mark.parametrize(("expr", "problem"), [
    ({"key": "a", "operator": "Gt", "values": ["1"]}, "operator 'Gt'"),
    ({"key": "a", "operator": "In", "values": []}, "needs values"),
    ({"key": "a", "operator": "Exists", "values": ["x"]}, "takes no values"),
    ({"operator": "Exists"}, "invalid label key"),
    ({"key": "a", "operator": "In", "values": ["bad value"]}, "invalid label value"),
    ({"key": "a", "operator": "In", "values": [1]}, "must be strings"),
])
def test_selector_from_label_selector_errors(expr, problem):
    with pytest.raises(ValueError, match=problem):
        meta.selector_from_label_selector({"matchExpressions": [expr]})


# -- field selectors ---------------------------------------------------------------------------------------------


def test_field_selectors():
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"nodeName": "n1", "hostNetwork": True},
           "status": {"phase": "Running"}}
    assert meta.parse_field_selector("spec.nodeName=n1,status.phase!=Failed").matches(pod)
    assert meta.parse_field_selector("metadata.name==p").matches(pod)
    assert not meta.parse_field_selector("spec.nodeName=n2").matches(pod)
    assert meta.parse_field_selector("spec.hostNetwork=true").matches(pod)
    assert meta.parse_field_selector("spec.missing=").matches(pod)
    assert not meta.parse_field_selector("metadata.name.deeper=x").matches(pod)
    assert meta.parse_field_selector(None).empty() and meta.parse_field_selector("").matches(pod)
    assert str(meta.parse_field_selector(" a.b = c , d!=e ")) == "a.b=c,d!=e"


@pytest.mark.parametrize("bad", ["name", "a<b", "=x", "a=b,,c=d"])
def test_field_selector_errors(bad):
    with pytest.raises(ValueError, match="invalid field selector"):
        meta.parse_field_selector(bad)


def test_format_time_pads_the_year_to_four_digits():
    # RFC 3339 years are 4 digits; glibc's strftime wrote "999-01-01..."
    assert meta.format_time(datetime(999, 1, 1, tzinfo=timezone.utc)) == "0999-01-01T00:00:00Z"
