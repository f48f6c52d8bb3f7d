"""What an update may not change, per kind (kube-apiserver's ValidateXUpdate rules and messages)."""

from __future__ import annotations

from typing import Any

import pytest
from fake_tracker_helpers import make_pod

from apis import errors
from apis import resources as r
from apis.fake import FakeClientset, ObjectTracker
from apis.fake.tracker.immutability import validate_update
from apis.resources import GroupVersionResource, ResourceInfo

POD_FORBIDDEN = (
    "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,"
    "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),"
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"
)
JOBS = ResourceInfo(GroupVersionResource("batch", "v1", "jobs"), "Job")


def _pod(**spec: Any) -> dict[str, Any]:
    pod = make_pod("p")
    pod["spec"].update(spec)
    return pod


def _pod_causes(old_spec: dict[str, Any], new_spec: dict[str, Any]) -> list[dict[str, str]]:
    return validate_update(r.lookup(r.PODS), _pod(**new_spec), _pod(**old_spec))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({}, {"containers": [{"name": "main", "image": "nginx"}]}),
        ({}, {"activeDeadlineSeconds": 30}),
        ({"activeDeadlineSeconds": 30}, {"activeDeadlineSeconds": 10}),
        ({}, {"tolerations": [{"key": "k", "operator": "Exists"}]}),
        ({"tolerations": [{"key": "k", "effect": "NoExecute", "tolerationSeconds": 5}]},
         {"tolerations": [{"key": "k", "effect": "NoExecute", "tolerationSeconds": 9}, {"key": "other"}]}),
        ({"terminationGracePeriodSeconds": -1}, {"terminationGracePeriodSeconds": 1}),
        ({"schedulingGates": [{"name": "a"}, {"name": "b"}]}, {"schedulingGates": [{"name": "b"}]}),
        ({"hostname": "h"}, {"hostname": "h", "nodeSelector": {}}),  # empty equals absent, as Go's zero values
    ],
)
def test_pod_spec_changes_kubernetes_allows(old: dict[str, Any], new: dict[str, Any]) -> None:
    assert _pod_causes(old, new) == []


def test_pod_spec_changes_anywhere_else_are_forbidden_with_the_diff() -> None:
    (cause,) = _pod_causes({"hostname": "a"}, {"hostname": "b"})
    assert (cause["type"], cause["field"]) == ("FieldValueForbidden", "spec")
    assert cause["message"].startswith(POD_FORBIDDEN + "\n")
    assert '- \thostname: "a",' in cause["message"] and '+ \thostname: "b",' in cause["message"]
    (env,) = _pod_causes({}, {"containers": [{"name": "main", "image": "busybox", "env": [{"name": "A", "value": "1"}]}]})
    assert env["message"].startswith(POD_FORBIDDEN)


def test_pod_containers_may_not_be_added_or_removed_nor_lose_their_image() -> None:
    two = [{"name": "main", "image": "busybox"}, {"name": "side", "image": "envoy"}]
    assert _pod_causes({}, {"containers": two}) == [
        {"type": "FieldValueForbidden", "field": "spec.containers", "message": "Forbidden: pod updates may not add or remove containers"}
    ]
    assert _pod_causes({}, {"containers": [{"name": "main", "image": ""}]}) == [
        {"type": "FieldValueRequired", "field": "spec.containers[0].image", "message": "Required value"}
    ]


def test_pod_active_deadline_and_tolerations_rules() -> None:
    assert _pod_causes({"activeDeadlineSeconds": 10}, {"activeDeadlineSeconds": 20}) == [
        {"type": "FieldValueInvalid", "field": "spec.activeDeadlineSeconds",
         "message": "Invalid value: 20: must be less than or equal to previous value"}
    ]
    assert _pod_causes({"activeDeadlineSeconds": 10}, {})[0]["message"] == (
        "Invalid value: null: must not update from a positive integer to nil value"
    )
    removed = _pod_causes({"tolerations": [{"key": "k"}]}, {})
    assert removed[0] == {"type": "FieldValueForbidden", "field": "spec.tolerations",
                          "message": "Forbidden: existing toleration can not be modified except its tolerationSeconds"}


def test_selectors_of_deployments_replica_sets_and_jobs_are_immutable() -> None:
    old = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}, "replicas": 1}}
    new = {"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "b"}}, "replicas": 3}}
    expected = [{
        "type": "FieldValueInvalid", "field": "spec.selector",
        "message": 'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"b"}, '
                   "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
    }]
    assert validate_update(r.lookup(r.DEPLOYMENTS), new, old) == expected
    rs = ResourceInfo(GroupVersionResource("apps", "v1", "replicasets"), "ReplicaSet")
    assert validate_update(rs, new, old) == expected
    assert validate_update(r.lookup(r.DEPLOYMENTS), {**old, "spec": {**old["spec"], "replicas": 5}}, old) == []
    job_old = {"spec": {"selector": {"matchLabels": {"j": "1"}}, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}}
    job_new = {"spec": {"selector": {"matchLabels": {"j": "1"}}, "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}}
    (cause,) = validate_update(JOBS, job_new, job_old)
    assert cause["field"] == "spec.template" and cause["message"].endswith(": field is immutable")


def test_immutable_config_maps_and_secrets() -> None:
    old = {"data": {"k": "v"}, "immutable": True}
    assert validate_update(r.lookup(r.CONFIGMAPS), {"data": {"k": "w"}, "immutable": True}, old) == [
        {"type": "FieldValueForbidden", "field": "data", "message": "Forbidden: field is immutable when `immutable` is set"}
    ]
    assert [c["field"] for c in validate_update(r.lookup(r.SECRETS), {"data": {"k": "v"}}, old)] == ["immutable"]
    assert validate_update(r.lookup(r.CONFIGMAPS), {"data": {"k": "w"}}, {"data": {"k": "v"}}) == []


def test_tracker_allocates_a_cluster_ip_and_keeps_it(tracker: ObjectTracker) -> None:
    svc = tracker.create(r.SERVICES, {"metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}}, "default")
    assert (svc["spec"]["type"], svc["spec"]["clusterIP"], svc["spec"]["clusterIPs"]) == ("ClusterIP", "10.96.0.10", ["10.96.0.10"])
    other = tracker.create(r.SERVICES, {"metadata": {"name": "api"}}, "default")
    assert other["spec"]["clusterIP"] == "10.96.0.11"
    headless = tracker.create(r.SERVICES, {"metadata": {"name": "hl"}, "spec": {"clusterIP": "None"}}, "default")
    assert headless["spec"]["clusterIPs"] == ["None"]
    svc["spec"] = {"ports": [{"port": 81}]}  # a PUT that leaves the allocated address out keeps it
    assert tracker.update(r.SERVICES, svc, "default")["spec"]["clusterIP"] == "10.96.0.10"
    with pytest.raises(errors.InvalidError) as err:
        tracker.patch(r.SERVICES, "default", "web", {"spec": {"clusterIP": "10.96.0.99"}})
    assert err.value.message == (
        'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.99"}: may not change once set'
    )


def test_pod_spec_immutability_through_every_write_path_and_binding(tracker: ObjectTracker) -> None:
    pod = tracker.create(r.PODS, make_pod("p"), "default")
    for patch_type, body in [("merge", {"spec": {"hostname": "x"}}),
                             ("json", [{"op": "add", "path": "/spec/hostname", "value": "x"}]),
                             ("strategic", {"spec": {"hostname": "x"}})]:
        with pytest.raises(errors.InvalidError, match="pod updates may not change fields other than"):
            tracker.patch(r.PODS, "default", "p", body, patch_type)
    with pytest.raises(errors.InvalidError, match="pod updates may not change fields other than"):
        tracker.update(r.PODS, {**pod, "spec": {**pod["spec"], "nodeName": "n1"}})
    assert tracker.get(r.PODS, "default", "p")["metadata"]["resourceVersion"] == pod["metadata"]["resourceVersion"]
    image = tracker.patch(r.PODS, "default", "p", {"spec": {"containers": [{"name": "main", "image": "nginx"}]}}, "strategic")
    assert image["spec"]["containers"][0]["image"] == "nginx"
    bound = tracker.bind("default", "p", "n1")
    assert bound["spec"]["nodeName"] == "n1"
    assert [c["type"] for c in bound["status"]["conditions"]] == ["PodScheduled"]
    with pytest.raises(errors.ConflictError) as err:
        tracker.bind("default", "p", "n2")
    assert err.value.message == 'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"'


def test_fake_clientset_applies_the_same_rules() -> None:
    cs = FakeClientset()
    deployments = cs.apps_v1().deployments("default")
    deployments.create({"metadata": {"name": "d"}, "spec": {"selector": {"matchLabels": {"app": "a"}}}})
    with pytest.raises(errors.InvalidError, match="spec.selector: Invalid value: .*field is immutable"):
        deployments.patch("d", {"spec": {"selector": {"matchLabels": {"app": "b"}}}})
