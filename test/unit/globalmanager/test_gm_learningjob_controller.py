"""IL/LL controller behaviour around the state machine: missing Datasets/Models (a visible wait, never Failed, and a
wake-up when they appear), deletion (pods, edge, no state left behind), the report grace for ended pods, no pod
created twice, the newest stage pod (never the previous cycle's while the new one is expected), the hot-update
deploy path, and a whole Train → Eval → Deploy → Train cycle."""

from __future__ import annotations

import pytest
from learningjob_test_helpers import (
    EVAL_READY,
    IL_KIND,
    IL_REFS,
    LL_KIND,
    LL_REFS,
    LL_TRAIN_READY,
    READY,
    TRAIN_READY,
    LearningHarness,
    condition,
    il_job,
    ll_job,
)
from sedna_test_helpers import NS, dataset, model

from apis import meta
from apis import resources as r
from globalmanager.controllers.learningjob.controller import POD_ORDER_ANNOTATION
from globalmanager.runtime.edge import DELETE, INSERT


@pytest.fixture
def harness(make_learning_harness):
    return make_learning_harness


def queued(h: LearningHarness) -> list[str]:
    keys = []
    while h.controller.queue.len():
        key, _ = h.controller.queue.get()
        h.controller.queue.done(key)
        keys.append(key)
    return keys


# -- missing references ----------------------------------------------------------------------------------------------
def test_il_waits_visibly_for_its_dataset_and_model(harness):
    h = harness(IL_KIND, il_job(), model("initial-model", "/models/initial.pb"))
    assert h.step("il") is None
    last = h.conditions("il")[-1]
    assert (last["stage"], last["type"], last["status"]) == ("Train", "Waiting", "True")
    assert last["reason"] == "DatasetNotFound" and last["message"] == "dataset default/ds not found; waiting for it"
    assert "startTime" not in h.job("il")["status"] and h.pods() == []  # the inference pod waits too
    assert h.events() == [("Warning", "DatasetNotFound", "dataset default/ds not found; waiting for it")]
    h.step("il")
    assert len(h.events()) == 1  # the same wait is not announced again

    # the Dataset appears: the job is woken through the references index (not a scan) and goes on
    h.cs.sedna_v1alpha1().datasets(NS).create(dataset("ds", "/data/train.txt", "ds-node"))
    h.refresh()
    queued(h)
    h.controller.wake_referencing(r.DATASETS, h.client(r.DATASETS).get("ds"))
    assert queued(h) == [f"{NS}/il"]
    h.step("il")
    last = h.conditions("il")[-1]
    assert last["reason"] == "ModelNotFound" and "deploy-model" in last["message"]
    h.cs.sedna_v1alpha1().models(NS).create(model("deploy-model", "/models/deploy.pb"))
    h.step("il")
    assert h.states("il") == [("Train", "Waiting")]
    assert "reason" not in h.conditions("il")[-1] and "message" not in h.conditions("il")[-1]
    assert len(h.pods("inference")) == 1 and h.job("il")["status"]["startTime"]
    assert all(c.get("type") != "Failed" for c in h.conditions("il"))


@pytest.mark.parametrize("kind,make_job,refs", [(IL_KIND, il_job, IL_REFS), (LL_KIND, ll_job, LL_REFS)])
@pytest.mark.parametrize("metric,why", [
    ("no_such_metric", "is not a metric the train trigger is evaluated on (known: num_of_samples)"),
    ("num_of_samples[0]", "indexes 'num_of_samples', which is a number, not a list"),
])
def test_a_train_trigger_that_never_fires_is_shown_on_the_job(harness, kind, make_job, refs, metric, why):
    job = make_job()
    job["spec"]["trainSpec"]["trigger"] = {"condition": {"operator": ">", "threshold": 5, "metric": metric}}
    h = harness(kind, job, *refs)
    name = meta.name(job)
    h.step(name)
    h.step(name)
    last = h.conditions(name)[-1]
    message = f"spec.trainSpec.trigger.condition.metric {metric!r} {why}; the trigger never fires"
    assert (last["stage"], last["type"], last["reason"], last["message"]) == ("Train", "Waiting",
                                                                              "UnknownTriggerMetric", message)
    assert [e for e in h.events() if e[0] == "Warning"] == [("Warning", "UnknownTriggerMetric", message)]  # once
    # fixed: the note goes, the job goes on waiting for its samples
    fixed = h.job(name)
    fixed["spec"]["trainSpec"]["trigger"]["condition"]["metric"] = "num_of_samples"
    h.jobs.update(fixed)
    h.step(name)
    assert h.states(name) == [("Train", "Waiting")]
    assert "reason" not in h.conditions(name)[-1] and "message" not in h.conditions(name)[-1]


def _bad_hot_update(spec: dict, value: object) -> None:
    spec["deploySpec"]["model"]["hotUpdateEnabled"] = value


def _bad_output_dir(spec: dict, value: object) -> None:
    spec["outputDir"] = value


@pytest.mark.parametrize("kind,make_job,refs,spoil,bad,good,where", [
    (IL_KIND, il_job, IL_REFS, _bad_hot_update, "yes", False, "spec.deploySpec.model.hotUpdateEnabled"),
    (LL_KIND, ll_job, LL_REFS, _bad_output_dir, 5, "s3://out/ll/", "spec.outputDir"),
])
def test_a_spec_the_view_rejects_is_shown_and_nothing_is_built_until_it_is_fixed(harness, kind, make_job, refs,
                                                                                 spoil, bad, good, where):
    job = make_job()
    spoil(job["spec"], bad)
    h = harness(kind, job, *refs)
    name = meta.name(job)
    h.set_conditions(name, condition("Train", "Waiting"), condition("Train", "Ready", READY[kind, "Train"]),
                     start=False)
    assert h.step(name) is None  # the spec's next change wakes the job
    h.to_edge(INSERT, h.controller.ctx.get_job(f"{NS}/{name}"))
    h.step(name)
    last = h.conditions(name)[-1]
    assert (last["stage"], last["type"], last["reason"]) == ("Train", "Ready", "InvalidSpec")
    assert last["message"].startswith(f"reported by lc; {where}: expected ")
    assert last["message"].endswith("; waiting for the spec to be fixed")
    assert [e[:2] for e in h.events() if e[0] == "Warning"] == [("Warning", "InvalidSpec")]  # once
    assert h.pods() == [] and "startTime" not in h.job(name)["status"]
    assert [m for m in h.edge.sent if m.obj.get("kind") == kind] == []  # placed nowhere while it cannot be read
    fixed = h.job(name)
    spoil(fixed["spec"], good)
    h.jobs.update(fixed)
    h.step(name)
    h.step(name)  # IL's first sync creates its inference pod, the next one the train pod
    assert h.states(name)[-1] == ("Train", "Starting") and len(h.pods("train")) == 1
    assert "reason" not in h.conditions(name)[-1] and h.job(name)["status"]["startTime"]


def test_a_reference_deleted_mid_cycle_holds_the_stage_pod(harness):
    h = harness(LL_KIND, ll_job(), *LL_REFS)
    h.set_conditions("ll", condition("Train", "Waiting"), condition("Train", "Ready", LL_TRAIN_READY))
    h.client(r.DATASETS).delete("ds")
    h.step("ll")
    assert h.pods() == [] and h.states("ll")[-1] == ("Train", "Ready")
    last = h.conditions("ll")[-1]
    assert last["reason"] == "DatasetNotFound" and last["message"].startswith("reported by lc; dataset default/ds")
    h.cs.sedna_v1alpha1().datasets(NS).create(dataset("ds", "/data/train.txt", "ds-node"))
    h.step("ll")
    assert h.states("ll")[-1] == ("Train", "Starting") and len(h.pods("train")) == 1
    assert h.conditions("ll")[-2]["message"] == "reported by lc; dataset default/ds not found; waiting for it"


def test_a_ready_condition_without_input_is_shown_not_failed(harness):
    h = harness(LL_KIND, ll_job(), *LL_REFS)
    h.set_conditions("ll", condition("Train", "Waiting"), condition("Train", "Ready", {}))
    h.step("ll")
    last = h.conditions("ll")[-1]
    assert (last["type"], last["reason"]) == ("Ready", "InvalidConditionData") and h.pods() == []
    assert "carries no data.input" in last["message"]


# -- deletion --------------------------------------------------------------------------------------------------------
def test_deleting_a_job_deletes_its_pods_and_tells_its_nodes(harness):
    h = harness(IL_KIND, il_job(), *IL_REFS)
    h.step("il")
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.step("il")
    h.to_edge(INSERT, h.controller.ctx.get_job(f"{NS}/il"))
    assert len(h.pods()) == 2
    job = h.controller.ctx.get_job(f"{NS}/il")
    h.edge.sent.clear()
    h.jobs.delete("il")
    assert h.pods() == []  # garbage-collected through their ownerReferences
    h.refresh()
    h.controller.delete_job(job)
    assert {(m.node, m.operation) for m in h.edge.sent if m.obj.get("kind") == "IncrementalLearningJob"} == {
        ("ds-node", DELETE)}
    assert h.sync("il") is None
    assert len(h.controller.job_states) == 0 and h.placement.tracked() == 0
    assert h.router.routes_of(f"incrementallearningjob/{NS}/il") == set()


# -- ended pods, duplicates, ordering --------------------------------------------------------------------------------
def test_an_ended_pod_waits_for_the_lc_report(harness):
    h = harness(IL_KIND, il_job(), *IL_REFS)
    h.controller.ctx.state.report_grace = 5.0
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Running"))
    pod = h.add_pod("il", "train", "Succeeded", "train-node")
    h.step("il")
    assert h.states("il")[-1] == ("Train", "Running")  # the report with the trained model may be on its way
    h.timer.advance(4.9)
    h.step("il")
    assert h.states("il")[-1] == ("Train", "Running")
    h.timer.advance(0.2)
    h.step("il")
    assert h.states("il")[-1] == ("Train", "Completed")  # no report came: the pod's phase decides, as in Go
    assert h.controller.ctx.job_state(h.job("il")).ended_stage_pod == (meta.uid(pod), 1000.0)

    # the report arrives first: the pod is not needed to move on
    h.set_conditions("il", condition("Eval", "Waiting"), condition("Eval", "Running"))
    h.add_pod("il", "eval", "Succeeded", "eval-node", order=2)
    h.step("il")
    h.report("il", "eval-node", {"phase": "eval", "status": "completed", "output": {"models": [{"url": "/m"}]}})
    h.step("il")
    assert h.states("il")[-2:] == [("Eval", "Completed"), ("Deploy", "Waiting")]
    assert h.conditions("il")[-2]["message"] == "reported by lc"


def test_a_pod_is_not_created_twice_before_the_cache_shows_it(harness):
    h = harness(IL_KIND, il_job(), *IL_REFS)
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.add_pod("il", "inference", "Running", "deploy-node")
    h.refresh()
    failing = {"on": True}
    h.cs.prepend_reactor("update", "incrementallearningjobs", lambda a: (
        failing["on"] and a.subresource == "status", None, RuntimeError("status write failed")))
    with pytest.raises(RuntimeError):
        h.sync("il")  # the train pod is created, Starting is not written
    assert len(h.pods("train")) == 1
    failing["on"] = False
    h.sync("il")  # the cache has not shown the new pod yet: no second one
    assert len(h.pods("train")) == 1
    h.step("il")
    assert len(h.pods("train")) == 1 and h.states("il")[-1] == ("Train", "Starting")


def test_no_stage_pod_for_a_job_deleted_before_the_cache_saw_it(harness):
    h = harness(IL_KIND, il_job(), *IL_REFS)
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.add_pod("il", "inference", "Running", "deploy-node")
    h.refresh()
    h.jobs.delete("il")  # the cache still has the job (Sedna #466): asked from the API server, no pod is created
    before = len(h.actions("create", "pods"))
    h.sync("il")
    assert len(h.actions("create", "pods")) == before  # (the fake API server would garbage-collect one at once)


def test_a_new_cycles_stage_is_not_completed_by_the_previous_cycles_pod(harness):
    """Right after Train/Ready → Starting the cache may not show the new train pod yet: the newest one there is the
    previous cycle's Succeeded pod, which must not complete a training that has not started."""
    h = harness(IL_KIND, il_job(), *IL_REFS)
    h.controller.ctx.state.report_grace = 5.0
    h.set_conditions("il", condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY),
                     condition("Train", "Starting"), condition("Train", "Completed", {"output": {"models": []}}),
                     condition("Eval", "Waiting"), condition("Eval", "Ready", EVAL_READY),
                     condition("Eval", "Starting"), condition("Eval", "Completed", {}),
                     condition("Deploy", "Waiting"), condition("Deploy", "Completed", {}),
                     condition("Train", "Waiting"), condition("Train", "Ready", TRAIN_READY))
    h.add_pod("il", "inference", "Running", "deploy-node")
    h.add_pod("il", "train", "Succeeded", "train-node", order=1)  # the previous cycle's
    h.step("il")
    assert h.states("il")[-1] == ("Train", "Starting") and len(h.pods("train")) == 2
    (new,) = [p for p in h.pods("train") if meta.annotations(p)[POD_ORDER_ANNOTATION] == "12"]
    pods = h.factory.for_resource(r.PODS).informer().get_indexer()
    pods.delete(new)  # the pod informer lags behind
    h.sync("il")
    h.timer.advance(6)  # past the report grace the old pod would get
    h.sync("il")
    assert h.states("il")[-1] == ("Train", "Starting")
    new["status"] = {"phase": "Running"}
    h.client(r.PODS).update_status(new)
    h.step("il")  # the new pod shows up: it decides
    assert h.states("il")[-1] == ("Train", "Running")


def test_the_newest_stage_pod_decides(harness):
    h = harness(LL_KIND, ll_job(), *LL_REFS)
    h.set_conditions("ll", condition("Train", "Waiting"), condition("Train", "Running"))
    h.add_pod("ll", "train", "Running", "train-node", order=5)
    h.add_pod("ll", "train", "Succeeded", "old-node", order=1)  # an earlier round's, created in the same second
    h.step("ll")
    assert h.states("ll")[-1] == ("Train", "Running")
    assert meta.annotations(h.job("ll"))["sedna.io/Train"] == "train-node"


def test_il_hot_update_deploy(harness):
    h = harness(IL_KIND, il_job(hot=True), *IL_REFS)
    h.step("il")
    (infer,) = h.pods("inference")
    h.set_status(r.PODS, meta.name(infer), {"phase": "Running"})
    h.set_conditions("il", condition("Deploy", "Waiting"), condition("Deploy", "Ready", {"input": {}}))
    h.step("il")
    assert h.states("il")[-1] == ("Deploy", "Starting") and [meta.name(p) for p in h.pods()] == [meta.name(infer)]
    h.step("il")
    assert h.states("il")[-1] == ("Deploy", "Running")
    assert meta.annotations(h.job("il"))["sedna.io/Deploy"] == "deploy-node"
    h.report("il", "deploy-node", {"phase": "deploy", "status": "completed"})
    h.step("il")
    assert h.states("il")[-2:] == [("Deploy", "Completed"), ("Train", "Waiting")]


# -- a whole cycle ---------------------------------------------------------------------------------------------------
def test_il_cycle_train_eval_deploy_train(harness):
    h = harness(IL_KIND, il_job(), *IL_REFS)

    def sync_and_place() -> None:
        h.step("il")
        h.to_edge(INSERT, h.controller.ctx.get_job(f"{NS}/il"))

    def pod_phase(worker: str, phase: str) -> None:
        pod = max(h.pods(worker), key=lambda p: int(meta.annotations(p)["sedna.io/condition-count"]))
        h.set_status(r.PODS, meta.name(pod), {"phase": phase})

    sync_and_place()
    pod_phase("inference", "Running")
    h.report("il", "ds-node", {"phase": "train", "status": "ready", **TRAIN_READY})
    sync_and_place()
    pod_phase("train", "Running")
    sync_and_place()
    h.report("il", "train-node", {"phase": "train", "status": "completed",
                                  "output": {"models": [{"format": "pb", "url": "/output/train/1/model.pb"}]}})
    sync_and_place()
    pod_phase("train", "Succeeded")
    h.report("il", "ds-node", {"phase": "eval", "status": "ready", **EVAL_READY})
    sync_and_place()
    pod_phase("eval", "Running")
    sync_and_place()
    pod_phase("eval", "Succeeded")  # no report: after the grace (0 here) the pod's phase completes Eval
    sync_and_place()
    sync_and_place()
    old = h.pods("inference")[0]
    h.report("il", "eval-node", {"phase": "deploy", "status": "ready", "input": {"models": [
        {"format": "pb", "url": "/output/train/1/model.pb"}, {"format": "pb", "url": "/models/deploy.pb"}]}})
    sync_and_place()
    sync_and_place()
    assert h.states("il") == [
        ("Train", "Waiting"), ("Train", "Ready"), ("Train", "Starting"), ("Train", "Running"),
        ("Train", "Completed"), ("Eval", "Waiting"), ("Eval", "Ready"), ("Eval", "Starting"), ("Eval", "Running"),
        ("Eval", "Completed"), ("Deploy", "Waiting"), ("Deploy", "Ready"), ("Deploy", "Completed"),
        ("Train", "Waiting")]
    (infer,) = h.pods("inference")
    assert meta.name(infer) != meta.name(old)  # restarted for the new model
    assert {k: v for k, v in meta.annotations(h.job("il")).items()} == {
        "sedna.io/Train": "train-node", "sedna.io/Eval": "eval-node"}
    jobs = [(m.node, m.operation, m.obj["status"]["conditions"][-1]["type"]) for m in h.edge.sent
            if m.obj.get("kind") == "IncrementalLearningJob"]
    assert ("train-node", DELETE, "Completed") in jobs and ("eval-node", INSERT, "Waiting") in jobs
    assert jobs[-1] == ("ds-node", INSERT, "Waiting")
