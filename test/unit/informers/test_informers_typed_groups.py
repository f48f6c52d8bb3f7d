"""The generic informer factory and listers know no custom kind: typed groups and listers come from the API packages
(``apis.informer_registry``), the DESIGN spellings still work, and a controller author can add a kind the same way."""

from __future__ import annotations

import threading

import pytest
from testkit import REPO

from apis import informer_registry
from apis import resources as r
from apis.fake import FakeClientset
from apis.informer_registry import TypedLister
from apis.resources import GroupVersionResource, ResourceInfo
from informers import SharedInformerFactory

CUSTOM_CONSTANTS = [info for info in dir(r) if info.isupper() and isinstance(getattr(r, info), GroupVersionResource)
                    and getattr(r, info).group in (r.SEDNA_GROUP, r.ELASTICDL_GROUP)]


def test_the_informers_package_names_no_sedna_or_elasticdl_kind():
    assert len(CUSTOM_CONSTANTS) == 12
    for path in (REPO / "informers").rglob("*.py"):
        text = path.read_text()
        for name in CUSTOM_CONSTANTS:
            assert f"r.{name}" not in text and f" {name}" not in text, f"{path.name} names {name}"
        assert "sedna.io" not in text and "elasticdl.org" not in text, path.name


def job(name, ns="default"):
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
            "metadata": {"name": name, "namespace": ns}, "spec": {}}


def test_design_spellings_still_work():
    cs = FakeClientset(job("a"), job("b", "other"))
    f = SharedInformerFactory(cs)
    jobs = f.sedna_v1alpha1().incremental_learning_jobs()
    assert jobs is f.for_resource(r.INCREMENTAL_LEARNING_JOBS)  # one shared informer
    eai = f.elasticdl_v1alpha1().elastic_ai_jobs()
    stop = threading.Event()
    f.start(stop)
    assert all(f.wait_for_cache_sync(stop).values())
    job_lister = jobs.lister()
    assert job_lister.incremental_learning_jobs("default").get("a")["metadata"]["name"] == "a"
    assert sorted(j["metadata"]["name"] for j in job_lister.list()) == ["a", "b"]
    assert job_lister.namespaced("other").get("b")["metadata"]["namespace"] == "other"
    assert eai.lister().elastic_ai_jobs("default").list() == []
    with pytest.raises(AttributeError):
        f.no_such_group_v1()
    stop.set()
    f.shutdown()


WIDGETS = GroupVersionResource("typed-groups.test.example", "v1", "widgets")


class WidgetLister(TypedLister):
    def widgets(self, namespace):
        return self.namespaced(namespace)


class ExampleV1Informers:
    def __init__(self, factory):
        self._factory = factory

    def widgets(self):
        return self._factory.for_resource(WIDGETS)


@pytest.fixture
def widget_kind():
    """The kind registered for one test only (the sandbox of a later test would otherwise serve it)."""
    r.register(ResourceInfo(WIDGETS, "Widget", namespaced=True))
    yield
    r.unregister(WIDGETS)


def test_a_controller_author_registers_a_typed_group_and_lister_for_a_kind_of_their_own(widget_kind):
    informer_registry.register_group("example_v1", ExampleV1Informers)
    informer_registry.register_lister(WIDGETS, WidgetLister)
    cs = FakeClientset({"apiVersion": "typed-groups.test.example/v1", "kind": "Widget",
                        "metadata": {"name": "w1", "namespace": "default"}})
    f = SharedInformerFactory(cs)
    widgets = f.example_v1().widgets()
    stop = threading.Event()
    f.start(stop)
    assert all(f.wait_for_cache_sync(stop).values())
    assert widgets.lister().widgets("default").get("w1")["kind"] == "Widget"
    assert widgets.lister().resource == WIDGETS
    stop.set()
    f.shutdown()
    with pytest.raises(ValueError):
        informer_registry.register_group("_private", ExampleV1Informers)
