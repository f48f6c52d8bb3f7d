"""Kubernetes JSONPath as kube-apiserver evaluates CRD printer columns (``sandbox.apiserver.jsonpath``), and the
Table cells built from it (``tables.crd_printer_columns``)."""

from __future__ import annotations

from typing import Any

import pytest

from apis.errors import BadRequestError
from sandbox.apiserver import jsonpath
from sandbox.apiserver.tables import TableOptions, crd_printer_columns, table_options, to_table

JOB: dict[str, Any] = {
    "metadata": {"name": "j", "labels": {"app": "x"}},
    "spec": {"replicas": 3, "ratio": 0.5, "big": 1e6, "on": True, "nodes": ["a", "b", "c"]},
    "status": {
        "conditions": [
            {"type": "Waiting", "stage": "Train", "n": 1},
            {"type": "Running", "stage": "Train", "n": 2},
            {"type": "Completed", "stage": "Eval", "n": 3},
        ]
    },
}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (".metadata.name", ["j"]),
        ("{.metadata.name}", ["j"]),
        ("$.metadata.name", ["j"]),
        (".status.conditions[0].type", ["Waiting"]),
        (".status.conditions[-1].type", ["Completed"]),
        (".status.conditions[-1].stage", ["Eval"]),
        (".status.conditions[-3].type", ["Waiting"]),
        (".status.conditions[*].type", ["Waiting", "Running", "Completed"]),
        (".status.conditions[1:].n", [2, 3]),
        (".status.conditions[:2].n", [1, 2]),
        (".status.conditions[-2:].stage", ["Train", "Eval"]),
        (".status.conditions[0,2].type", ["Waiting", "Completed"]),
        (".status.conditions[?(@.stage==\"Train\")].type", ["Waiting", "Running"]),
        (".status.conditions[?(@.n>=2)].type", ["Running", "Completed"]),
        (".status.conditions[?(@.n!=2)].n", [1, 3]),
        (".status.conditions[?(@.stage)].n", [1, 2, 3]),
        (".status.conditions[?(@.missing)].n", []),
        ("..stage", ["Train", "Train", "Eval"]),
        (".metadata['labels'].app", ["x"]),
        (".spec.nodes[*]", ["a", "b", "c"]),
        (".status.missing.deeper", []),
        (".status.conditions[0].missing", []),
    ],
)
def test_paths_select_what_kube_jsonpath_selects(path: str, expected: list[Any]) -> None:
    assert jsonpath.parse(path).find(JOB) == expected


@pytest.mark.parametrize(
    "path",
    [".status.conditions[3].type", ".status.conditions[-4].type", ".metadata.name[0]", ".spec.replicas[?(@.x)]"],
)
def test_out_of_range_indices_and_wrong_shapes_are_errors_and_empty_cells(path: str) -> None:
    with pytest.raises(jsonpath.JSONPathError):
        jsonpath.parse(path).find(JOB)
    assert jsonpath.parse(path).first(JOB) == (False, None)


def test_a_negative_index_on_an_empty_list_selects_nothing() -> None:
    assert jsonpath.parse(".a[-1]").first({"a": []}) == (False, None)
    assert jsonpath.parse(".a[-1]").first({}) == (False, None)


@pytest.mark.parametrize("path", [".a[x]", ".a[", ".a[?(@.b==1]", "{.a}{.b}", "range .a", ".a[1:x]"])
def test_malformed_paths_are_refused(path: str) -> None:
    with pytest.raises(jsonpath.JSONPathError):
        jsonpath.parse(path)


def test_comparisons_of_different_kinds_fail_as_go_templates_do() -> None:
    with pytest.raises(jsonpath.JSONPathError, match="incompatible"):
        jsonpath.parse('.status.conditions[?(@.n=="1")]').find(JOB)


@pytest.mark.parametrize(
    ("value", "printed"),
    [
        (True, "true"), (3, "3"), (0.5, "0.5"), (1e6, "1e+06"), (123456.0, "123456"), (1e-5, "1e-05"),
        (["a", 1], "[a 1]"), ({"b": 1, "a": "x"}, "map[a:x b:1]"), ("text", "text"),
    ],
)
def test_values_print_as_go_fmt_prints_them(value: Any, printed: str) -> None:
    assert jsonpath.format_value(value) == printed


def _crd(*columns: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"versions": [{"name": "v1", "additionalPrinterColumns": list(columns)}]}}


def test_printer_columns_take_the_first_value_typed_as_the_column_says() -> None:
    crd = _crd(
        {"name": "Stage", "type": "string", "jsonPath": ".status.conditions[-1].stage"},
        {"name": "Status", "type": "string", "jsonPath": ".status.conditions[-1].type", "description": "state"},
        {"name": "Types", "type": "string", "jsonPath": ".status.conditions[*].type"},
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ratio", "type": "integer", "jsonPath": ".spec.ratio"},
        {"name": "Wrong", "type": "integer", "jsonPath": ".metadata.name"},
        {"name": "Big", "type": "string", "jsonPath": ".spec.big"},
        {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
        {"name": "Missing", "type": "string", "jsonPath": ".status.conditions[7].type"},
        {"name": "Broken", "type": "string", "jsonPath": ".status.conditions[x]"},
    )
    columns = crd_printer_columns(crd, "v1")
    assert columns is not None
    table = to_table(JOB, "example.com", "jobs", columns=columns)
    assert table["rows"][0]["cells"] == ["j", "Eval", "Completed", "Waiting", 3, 0, None, "1e+06", True, None, None]
    definitions = table["columnDefinitions"]
    assert definitions[1]["description"] == "Custom resource definition column (in JSONPath format): " \
                                            ".status.conditions[-1].stage"
    assert definitions[2]["description"] == "state"


def test_include_object_decides_what_each_row_carries() -> None:
    pods = {"kind": "PodList", "apiVersion": "v1", "metadata": {}, "items": [{"metadata": {"name": "p"}}]}
    whole = to_table(pods, "", "pods", TableOptions("v1", "Object"))["rows"][0]["object"]
    assert whole == {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p"}}
    assert "object" not in to_table(pods, "", "pods", TableOptions("v1", "None"))["rows"][0]
    assert to_table(pods, "", "pods")["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_table_options_read_include_object_and_refuse_other_values() -> None:
    accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
    assert table_options(accept, {}) == TableOptions("v1", "Metadata")
    assert table_options(accept, {"includeObject": ["Object"]}) == TableOptions("v1", "Object")
    assert table_options("application/json", {"includeObject": ["Object"]}) is None
    with pytest.raises(BadRequestError, match='includeObject: Unsupported value: "All"'):
        table_options(accept, {"includeObject": ["All"]})
