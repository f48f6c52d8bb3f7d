"""Dataset and Model controllers over the fake clientset and ``RecordingEdgeLink``; informer caches are filled by
hand (as Go unit tests do with ``informer.GetIndexer().Add``) and ``sync`` is called directly."""

from __future__ import annotations

import base64
import json

import pytest

from apis import errors
from apis.fake import FakeClientset
from apis.record import EventRecorder
from apis.sedna.constants import CREDENTIAL_ANNOTATION
from globalmanager.controllers.context import ControllerContext
from globalmanager.controllers.dataset import DatasetController
from globalmanager.controllers.model import ModelRoute, model_router
from globalmanager.runtime.edge import RecordingEdgeLink
from informers import SharedInformerFactory

NS = "default"


def make_dataset(name: str = "d1", node: str = "edge-1", **spec: str) -> dict:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"namespace": NS, "name": name},
            "spec": {"url": f"/data/{name}.txt", "format": "txt", "nodeName": node, **spec}}


def make_model(name: str = "m1", **spec: str) -> dict:
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": {"namespace": NS, "name": name},
            "spec": {"url": f"/models/{name}.pb", "format": "pb", **spec}}


SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": NS, "name": "s3",
          "annotations": {"s3-endpoint": "minio:9000", "s3-usehttps": "0", "unrelated": "x"}},
          "data": {"ACCESS_KEY_ID": base64.b64encode(b"AK").decode(),
                   "SECRET_ACCESS_KEY": base64.b64encode(b"SK").decode(), "OTHER": base64.b64encode(b"o").decode()}}


class Env:
    def __init__(self, *objects: dict) -> None:
        self.cs = FakeClientset(*objects)
        self.edge = RecordingEdgeLink()
        self.ctx = ControllerContext(clientset=self.cs, informer_factory=SharedInformerFactory(self.cs),
                                     recorder=EventRecorder(self.cs, "sedna-gm"), edge=self.edge)

    def sent(self) -> list[tuple[str, str, str]]:
        return [(m.node, m.operation, m.obj["metadata"]["name"]) for m in self.edge.sent]


def _gvr(obj: dict):
    from apis.resources import DATASETS, MODELS

    return {"Dataset": DATASETS, "Model": MODELS}[obj["kind"]]


@pytest.fixture
def env() -> Env:
    return Env(SECRET)


@pytest.fixture
def datasets(env: Env) -> DatasetController:
    return DatasetController(env.ctx)


def store(env: Env, controller, obj: dict) -> dict:
    """Create or update ``obj`` on the fake server and put the stored copy in ``controller``'s informer cache, as an
    informer event would."""
    client = env.cs.resource(_gvr(obj), NS)
    try:
        current = client.get(obj["metadata"]["name"])
        obj = {**obj, "metadata": {**obj["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        stored = client.update(obj)
    except errors.NotFoundError:
        stored = client.create(obj)
    controller.informer.get_indexer().update(stored)
    return stored


def put(controller: DatasetController, env: Env, obj: dict) -> dict:
    return store(env, controller, obj)


def test_a_dataset_is_inserted_on_its_node_with_kind(env, datasets):
    put(datasets, env, make_dataset())
    datasets.sync(f"{NS}/d1")
    assert env.sent() == [("edge-1", "insert", "d1")]
    assert env.edge.sent[0].obj["kind"] == "Dataset"


def test_a_changed_node_name_deletes_from_the_old_node_and_inserts_on_the_new(env, datasets):
    put(datasets, env, make_dataset())
    datasets.sync(f"{NS}/d1")
    put(datasets, env, make_dataset(node="edge-2"))
    datasets.sync(f"{NS}/d1")
    assert env.sent() == [("edge-1", "insert", "d1"), ("edge-1", "delete", "d1"), ("edge-2", "insert", "d1")]


def test_a_deleted_dataset_is_deleted_from_its_node(env, datasets):
    stored = put(datasets, env, make_dataset())
    datasets.sync(f"{NS}/d1")
    datasets.informer.get_indexer().delete(stored)
    datasets._delete(stored)
    datasets.sync(f"{NS}/d1")
    assert env.sent()[-1] == ("edge-1", "delete", "d1")


def test_a_dataset_deleted_before_it_was_ever_sent_is_still_deleted_from_its_node(env, datasets):
    datasets._delete(make_dataset())  # e.g. this GM started after it was sent, and it went at once
    datasets.sync(f"{NS}/d1")
    assert env.sent() == [("edge-1", "delete", "d1")]


def test_the_credential_goes_on_the_copy_sent_never_on_the_cached_object(env, datasets):
    stored = put(datasets, env, make_dataset(credentialName="s3"))
    datasets.sync(f"{NS}/d1")
    sent = env.edge.sent[0].obj
    credential = json.loads(sent["metadata"]["annotations"][CREDENTIAL_ANNOTATION])
    assert credential == {"s3-endpoint": "minio:9000", "s3-usehttps": "0", "ACCESS_KEY_ID": "AK",
                          "SECRET_ACCESS_KEY": "SK"}
    cached = datasets.lister.namespaced(NS).get("d1")
    assert cached is stored or cached == stored
    assert CREDENTIAL_ANNOTATION not in (cached["metadata"].get("annotations") or {})


def test_a_missing_secret_fails_the_sync_so_that_it_is_retried(env, datasets):
    put(datasets, env, make_dataset(credentialName="nope"))
    with pytest.raises(errors.NotFoundError):
        datasets.sync(f"{NS}/d1")
    assert env.sent() == []


def test_a_dataset_without_node_name_gets_a_warning_event_and_is_not_sent(env, datasets):
    obj = make_dataset()
    obj["spec"]["nodeName"] = ""
    put(datasets, env, obj)
    datasets.sync(f"{NS}/d1")
    assert env.sent() == []
    events = env.cs.core_v1().events(NS).list()["items"]
    assert [(e["type"], e["reason"]) for e in events] == [("Warning", "NodeNameMissing")]


def test_status_only_updates_are_not_resent_but_resyncs_are(env, datasets):
    queued: list[str] = []
    datasets.loop.enqueue = queued.append
    old = put(datasets, env, make_dataset())
    new = {**old, "metadata": {**old["metadata"], "resourceVersion": "999"}, "status": {"numberOfSamples": 3}}
    datasets._update(old, new)
    assert queued == []
    datasets._update(old, old)  # periodic resync: re-sent, as in Go Sedna
    assert queued == [f"{NS}/d1"]


def test_state_for_a_node_lists_its_datasets_from_the_cache(env, datasets):
    put(datasets, env, make_dataset("a"))
    put(datasets, env, make_dataset("b", node="edge-2"))
    put(datasets, env, make_dataset("c"))
    assert sorted(o["metadata"]["name"] for o in env.edge.state_for("edge-1")) == ["a", "c"]


def test_a_report_sets_number_of_samples_and_update_time_only(env, datasets):
    stored = put(datasets, env, make_dataset())
    client = env.cs.sedna_v1alpha1().datasets(NS)
    client.update_status({**stored, "status": {"numberOfSamples": 1, "extra": "kept"}})
    env.cs.clear_actions()
    env.edge.report("edge-1", NS, "Dataset", "d1", {"numberOfSamples": 12})  # the cache is stale: conflict, retry
    status = client.get("d1")["status"]
    assert status["numberOfSamples"] == 12 and status["updateTime"].endswith("Z") and status["extra"] == "kept"
    writes = [a for a in env.cs.actions() if a.verb == "update"]
    assert len(writes) == 2 and all(a.subresource == "status" for a in writes)  # a 409 first, then the retry


@pytest.mark.parametrize("content", [{}, {"numberOfSamples": -1}, {"numberOfSamples": "3"},
                                     {"numberOfSamples": True}])
def test_a_malformed_report_is_refused(env, datasets, content):
    from globalmanager.runtime.edge import InvalidReport

    put(datasets, env, make_dataset())
    with pytest.raises(InvalidReport):
        env.edge.report("edge-1", NS, "dataset", "d1", content)


def test_a_report_for_a_deleted_dataset_is_ignored(env, datasets):
    env.edge.report("edge-1", NS, "dataset", "gone", {"numberOfSamples": 1})  # no exception, nothing written
    assert not [a for a in env.cs.actions() if a.verb == "update"]


def events_of(env: Env) -> list[tuple[str, str, str]]:
    return [(e["type"], e["reason"], e["message"]) for e in env.cs.core_v1().events(NS).list()["items"]]


def test_an_lc_error_sets_ready_false_with_its_reason_and_a_warning_event_and_a_count_clears_it(env, datasets):
    put(datasets, env, make_dataset())
    client = env.cs.sedna_v1alpha1().datasets(NS)
    missing = {"reason": "URLNotFound", "message": "/data/d1.txt: does not exist or is not a file"}
    env.edge.report("edge-1", NS, "Dataset", "d1", {"numberOfSamples": 0, "error": missing})
    status = client.get("d1")["status"]
    [ready] = status["conditions"]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "URLNotFound")
    assert ready["message"] == "node edge-1: /data/d1.txt: does not exist or is not a file"
    assert status["numberOfSamples"] == 0
    assert events_of(env) == [("Warning", "URLNotFound", "node edge-1: /data/d1.txt: does not exist or is not a file")]

    put(datasets, env, client.get("d1"))  # the informer sees the status
    env.edge.report("edge-1", NS, "Dataset", "d1", {"numberOfSamples": 3, "error": None})
    status = client.get("d1")["status"]
    [ready] = status["conditions"]
    assert (ready["status"], ready["reason"], status["numberOfSamples"]) == ("True", "SamplesCounted", 3)
    assert events_of(env)[-1] == ("Normal", "SamplesCounted", "node edge-1 counted 3 samples")
    assert len(events_of(env)) == 2


def test_a_count_without_error_adds_no_condition_as_in_go_sedna(env, datasets):
    put(datasets, env, make_dataset())
    env.edge.report("edge-1", NS, "Dataset", "d1", {"numberOfSamples": 5, "error": None})
    env.edge.report("edge-1", NS, "Dataset", "d1", {"numberOfSamples": 6})  # a Go LC's report
    status = env.cs.sedna_v1alpha1().datasets(NS).get("d1")["status"]
    assert status["numberOfSamples"] == 6 and "conditions" not in status and events_of(env) == []


def test_a_long_error_message_is_cut(env, datasets):
    put(datasets, env, make_dataset())
    env.edge.report("edge-1", NS, "Dataset", "d1",
                    {"numberOfSamples": 0, "error": {"reason": "ReadFailed", "message": "x" * 5000}})
    [ready] = env.cs.sedna_v1alpha1().datasets(NS).get("d1")["status"]["conditions"]
    assert len(ready["message"]) < 1100 and ready["message"].endswith("…")


@pytest.mark.parametrize("error", ["URLNotFound", {"message": "no reason"}, {"reason": "not a reason!"},
                                   {"reason": "R" * 200}, {"reason": "URLNotFound", "message": 3}])
def test_a_malformed_error_is_refused(env, datasets, error):
    from globalmanager.runtime.edge import InvalidReport

    put(datasets, env, make_dataset())
    with pytest.raises(InvalidReport):
        env.edge.report("edge-1", NS, "dataset", "d1", {"numberOfSamples": 0, "error": error})


# -- Model -------------------------------------------------------------------------------------------------------------
def cache_model(env: Env, router, obj: dict) -> dict:
    return store(env, router, obj)


def drain(router) -> None:
    """Run the syncs the router queued."""
    while len(router.loop.queue):
        key, _ = router.loop.queue.get()
        router.sync(key)
        router.loop.queue.done(key)


def test_a_routed_model_is_sent_once_per_version_and_resent_when_it_changes(env):
    router = model_router(env.ctx)
    assert model_router(env.ctx) is router  # one per context
    cache_model(env, router, make_model(credentialName="s3"))
    router.set_routes("incrementallearningjob/default/j1", [ModelRoute("edge-1", NS, "m1")])
    router.route("incrementallearningjob/default/j2", "edge-2", NS, "m1")
    drain(router)
    assert sorted(env.sent()) == [("edge-1", "insert", "m1"), ("edge-2", "insert", "m1")]
    assert CREDENTIAL_ANNOTATION in env.edge.sent[0].obj["metadata"]["annotations"]
    router.sync(f"{NS}/m1")  # nothing changed: nothing re-sent
    assert len(env.sent()) == 2
    cache_model(env, router, make_model(url="/models/m1-v2.pb", credentialName="s3"))
    router.sync(f"{NS}/m1")
    assert sorted(env.sent()[2:]) == [("edge-1", "insert", "m1"), ("edge-2", "insert", "m1")]
    assert env.edge.sent[-1].obj["spec"]["url"] == "/models/m1-v2.pb"


def test_a_model_is_deleted_from_a_node_only_when_no_job_routes_it_there(env):
    router = model_router(env.ctx)
    cache_model(env, router, make_model())
    router.route("job-a", "edge-1", NS, "m1")
    router.route("job-b", "edge-1", NS, "m1")
    drain(router)
    router.unroute("job-a")
    assert ("edge-1", "delete", "m1") not in env.sent()
    router.set_routes("job-b", [])
    assert env.sent()[-1] == ("edge-1", "delete", "m1")
    assert router.nodes_for(NS, "m1") == set()


def test_a_deleted_model_is_deleted_from_its_nodes_and_state_lists_routed_models(env):
    router = model_router(env.ctx)
    stored = cache_model(env, router, make_model())
    cache_model(env, router, make_model("m2"))
    router.set_routes("job", [ModelRoute("edge-1", NS, "m1"), ModelRoute("edge-1", NS, "m2"),
                              ModelRoute("edge-2", NS, "m2")])
    drain(router)
    assert sorted(o["metadata"]["name"] for o in env.edge.state_for("edge-1")) == ["m1", "m2"]
    router.informer.get_indexer().delete(stored)
    router.sync(f"{NS}/m1")
    assert env.sent()[-1] == ("edge-1", "delete", "m1")
    assert [o["metadata"]["name"] for o in env.edge.state_for("edge-1")] == ["m2"]
    assert router.routes_of("job") == {ModelRoute("edge-1", NS, "m1"), ModelRoute("edge-1", NS, "m2"),
                                       ModelRoute("edge-2", NS, "m2")}


def test_a_model_routed_before_it_exists_is_sent_when_it_appears(env):
    router = model_router(env.ctx)
    router.route("job", "edge-1", NS, "later")
    drain(router)
    assert env.sent() == []
    cache_model(env, router, make_model("later"))
    router.sync(f"{NS}/later")
    assert env.sent() == [("edge-1", "insert", "later")]
