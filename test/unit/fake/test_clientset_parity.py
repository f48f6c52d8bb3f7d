"""FakeClientset vs the real clientset: the same verbs with the same parameters, and the extra keywords work."""

from __future__ import annotations

import inspect

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis.client import ResourceClient
from apis.clientset import HTTPResourceClient
from apis.fake import FakeClientset
from apis.fake.clientset import FakeResourceClient

VERBS = sorted(
    name for name, member in inspect.getmembers(ResourceClient)
    if not name.startswith("_") and inspect.isfunction(member)
)


def _params(cls: type, verb: str) -> list[tuple[str, inspect._ParameterKind, object]]:
    """Names, kinds and defaults (annotations may differ: the real watch returns an HTTPWatch)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(getattr(cls, verb)).parameters.values()]


def test_the_verbs_are_the_interfaces():
    assert {"get", "list", "watch", "create", "update", "update_status", "patch", "delete",
            "delete_collection"} <= set(VERBS)
    public = {n for n, m in inspect.getmembers(HTTPResourceClient) if not n.startswith("_") and inspect.isfunction(m)}
    fake_public = {n for n, m in inspect.getmembers(FakeResourceClient) if not n.startswith("_") and inspect.isfunction(m)}
    assert public - {"path"} == set(VERBS) and fake_public == set(VERBS)


@pytest.mark.parametrize("verb", VERBS)
def test_same_parameters_as_the_real_client_and_the_interface(verb):
    expected = _params(ResourceClient, verb)
    assert _params(HTTPResourceClient, verb) == expected
    assert _params(FakeResourceClient, verb) == expected


def test_patch_records_field_manager_and_force():
    cs = FakeClientset(make_pod("a"))
    pods = cs.core_v1().pods("default")
    out = pods.patch("a", {"apiVersion": "v1", "kind": "Pod", "metadata": {"labels": {"x": "1"}}}, "apply",
                     field_manager="me", force=True)
    assert out["metadata"]["labels"] == {"x": "1"}
    action = cs.actions()[-1]
    assert (action.verb, action.field_manager, action.force, action.patch_type) == ("patch", "me", True, "apply")
    with pytest.raises(ValueError, match="force is only valid"):
        pods.patch("a", {"metadata": {}}, "merge", force=True)


def test_delete_records_grace_period_and_refuses_a_bad_policy():
    cs = FakeClientset(make_pod("a"))
    pods = cs.core_v1().pods("default")
    pods.delete("a", grace_period_seconds=0)
    assert cs.actions()[-1].grace_period_seconds == 0
    with pytest.raises(errors.NotFoundError):
        pods.get("a")
    with pytest.raises(ValueError, match="invalid propagation_policy"):
        pods.delete("a", propagation_policy="Sometimes")


def _owned_pod(name: str, owner: dict) -> dict:
    pod = make_pod(name)
    pod["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "ConfigMap", "name": owner["metadata"]["name"],
                                           "uid": owner["metadata"]["uid"]}]
    return pod


@pytest.mark.parametrize(("policy", "dependents_left"), [(None, []), ("Background", []), ("Orphan", ["dep"])])
def test_delete_collection_passes_the_propagation_policy(policy, dependents_left):
    cs = FakeClientset()
    cms = cs.core_v1().config_maps("default")
    owner = cms.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "o", "labels": {"k": "v"}}})
    cms.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}})
    cs.core_v1().pods("default").create(_owned_pod("dep", owner))
    cms.delete_collection(label_selector="k=v", propagation_policy=policy)
    assert [c["metadata"]["name"] for c in cms.list()["items"]] == ["keep"]
    assert [p["metadata"]["name"] for p in cs.core_v1().pods("default").list()["items"]] == dependents_left
    action = next(a for a in cs.actions() if a.verb == "delete-collection")
    assert action.propagation_policy == policy and action.options.label_selector == "k=v"
    with pytest.raises(ValueError, match="invalid propagation_policy"):
        cms.delete_collection(propagation_policy="Sometimes")
