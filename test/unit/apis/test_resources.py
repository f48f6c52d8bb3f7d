"""apis.resources: GVR/GVK spelling and the registry of known kinds."""

from __future__ import annotations

import pytest

from apis import resources as r
from apis.resources import GroupVersionKind, GroupVersionResource, ResourceInfo


def test_spelling_of_core_and_group_resources():
    assert r.PODS.api_version == "v1" and r.PODS.group_resource == "pods" and str(r.PODS) == "v1/pods"
    assert r.DEPLOYMENTS.api_version == "apps/v1" and r.DEPLOYMENTS.group_resource == "deployments.apps"
    assert r.DATASETS.group_resource == "datasets.sedna.io" and str(r.DATASETS) == "sedna.io/v1alpha1/datasets"
    assert str(GroupVersionKind("sedna.io", "v1alpha1", "Dataset")) == "sedna.io/v1alpha1, Kind=Dataset"
    assert GroupVersionKind("", "v1", "Pod").api_version == "v1"


def test_lookup_known_resources():
    pods = r.lookup(r.PODS)
    assert (pods.kind, pods.namespaced, pods.list_kind, pods.singular) == ("Pod", True, "PodList", "pod")
    assert pods.has_status and "po" in pods.short_names
    assert r.lookup(r.NODES).namespaced is False
    assert r.lookup(r.NAMESPACES).namespaced is False
    assert r.lookup(r.CUSTOM_RESOURCE_DEFINITIONS).namespaced is False
    assert r.lookup(r.LEASES).has_status is False
    assert r.lookup(r.DEPLOYMENTS).subresources == ("status", "scale")
    assert r.lookup(r.ELASTIC_AI_JOBS).gvk == GroupVersionKind("elasticdl.org", "v1alpha1", "ElasticAIJob")


def test_every_sedna_kind_is_registered_with_status():
    kinds = {"Dataset", "Model", "JointInferenceService", "FederatedLearningJob", "IncrementalLearningJob",
             "LifelongLearningJob", "FeatureExtractionService", "ObjectSearchService", "ObjectTrackingService",
             "ReidJob", "VideoAnalyticsJob"}
    sedna = {i.kind: i for i in r.all_resources() if i.gvr.group == r.SEDNA_GROUP}
    assert set(sedna) >= kinds
    for info in sedna.values():
        assert info.namespaced and info.has_status and info.gvr.version == r.SEDNA_VERSION
    assert {"ij", "incrementaljob"} <= set(sedna["IncrementalLearningJob"].short_names)
    assert {"jis", "jointinferenceservice"} <= set(sedna["JointInferenceService"].short_names)


def test_lookup_kind():
    assert r.lookup_kind("v1", "Pod").gvr == r.PODS
    assert r.lookup_kind("apps/v1", "Deployment").gvr == r.DEPLOYMENTS
    assert r.lookup_kind("sedna.io/v1alpha1", "IncrementalLearningJob").gvr == r.INCREMENTAL_LEARNING_JOBS


def test_unknown_resources_raise_key_errors_naming_them():
    with pytest.raises(KeyError, match="unknown resource nope.io/v1/things"):
        r.lookup(GroupVersionResource("nope.io", "v1", "things"))
    with pytest.raises(KeyError, match="unknown kind 'Thing' in 'nope.io/v1'"):
        r.lookup_kind("nope.io/v1", "Thing")
    with pytest.raises(KeyError):
        r.lookup_kind("v2", "Pod")


def test_register_adds_and_replaces():
    gvr = GroupVersionResource("test.sedna.io", "v1", "widgets")
    try:
        info = r.register(ResourceInfo(gvr, "Widget", namespaced=False))
        assert r.lookup(gvr) is info and r.lookup_kind("test.sedna.io/v1", "Widget") is info
        assert info in r.all_resources()
        replaced = r.register(ResourceInfo(gvr, "Widget", subresources=("status",)))
        assert r.lookup(gvr) is replaced and replaced.has_status
    finally:  # keep the process-wide registry as it was for other tests
        with r._lock:
            r._by_gvr.pop(gvr, None)
            r._by_gvk.pop(GroupVersionKind("test.sedna.io", "v1", "Widget"), None)


def test_value_types_are_hashable_and_frozen():
    assert {r.PODS: 1}[GroupVersionResource("", "v1", "pods")] == 1
    with pytest.raises(AttributeError):
        r.PODS.resource = "x"  # type: ignore[misc]


def test_every_clientset_accessor_has_the_constant_of_its_name():
    """``cs.core_v1().config_maps()`` ↔ ``CONFIG_MAPS``: the constant is the accessor's name in upper case."""
    from apis.client import ClientsetBase

    class Recording(ClientsetBase):
        def resource(self, gvr, namespace=""):
            return gvr

    cs = Recording()
    checked = 0
    for group in ("core_v1", "apps_v1", "coordination_v1", "autoscaling_v2", "sedna_v1alpha1",
                  "elasticdl_v1alpha1"):
        accessors = getattr(cs, group)()
        for name in dir(accessors):
            if name.startswith("_"):
                continue
            assert getattr(accessors, name)() == getattr(r, name.upper()), f"{group}().{name}()"
            checked += 1
    assert checked >= 20
    assert r.CONFIGMAPS is r.CONFIG_MAPS  # the former name still works
