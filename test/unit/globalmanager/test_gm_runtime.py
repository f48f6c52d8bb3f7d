"""Runtime helpers: labels, pod builder, conditions, status retry, event aggregation, self-healing bookkeeping."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from apis import errors, meta
from apis.fake import FakeClientset
from globalmanager.runtime import (
    EventRecorder,
    JobStates,
    RecreatedPods,
    WorkerParam,
    append_condition,
    filter_active_pods,
    generate_labels,
    generate_selector,
    generate_worker_selector,
    pod_from_template,
    set_condition,
    update_status,
)
from globalmanager.runtime.status import MAX_APPENDED_CONDITIONS

JI = {
    "apiVersion": "sedna.io/v1alpha1",
    "kind": "JointInferenceService",
    "metadata": {"name": "ji1", "namespace": "default", "uid": "u-1"},
}


def test_labels_use_sedna_prefix():
    assert generate_labels(JI, "Edge") == {
        "jointinferenceservice.sedna.io/name": "ji1",
        "jointinferenceservice.sedna.io/uid": "u-1",
        "jointinferenceservice.sedna.io/worker-type": "edge",
    }
    sel = generate_selector(JI)
    assert sel.matches(generate_labels(JI, "cloud")) and not sel.matches({"jointinferenceservice.sedna.io/name": "ji1"})
    assert not generate_worker_selector(JI, "edge").matches(generate_labels(JI, "cloud"))


def test_pod_from_template_sets_owner_labels_env_and_generate_name():
    template = {
        "metadata": {"name": "ignored", "labels": {"app": "x"}},
        "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "old"}]}]},
    }
    pod = pod_from_template(JI, template, WorkerParam("Edge", env={"A": "new", "B": "2"}, restart_policy="OnFailure"))
    md = pod["metadata"]
    assert md["generateName"] == "ji1-edge-" and "name" not in md and md["namespace"] == "default"
    assert md["labels"]["app"] == "x" and md["labels"]["jointinferenceservice.sedna.io/worker-type"] == "edge"
    assert md["ownerReferences"][0]["uid"] == "u-1" and md["ownerReferences"][0]["controller"] is True
    assert pod["spec"]["containers"][0]["env"] == [{"name": "A", "value": "new"}, {"name": "B", "value": "2"}]
    assert pod["spec"]["restartPolicy"] == "OnFailure"
    assert template["spec"]["containers"][0]["env"] == [{"name": "A", "value": "old"}]  # template untouched
    template["spec"]["restartPolicy"] = "Never"
    assert pod_from_template(JI, template, WorkerParam("Edge", restart_policy="Always"))["spec"]["restartPolicy"] == "Never"


def test_filter_active_pods():
    pods = [
        {"metadata": {"name": "a"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "b"}, "status": {"phase": "Succeeded"}},
        {"metadata": {"name": "c"}, "status": {"phase": "Failed"}},
        {"metadata": {"name": "d", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "e"}},
    ]
    assert [meta.name(p) for p in filter_active_pods(pods)] == ["a", "e"]


def test_set_condition_keeps_transition_time_when_status_unchanged():
    conds: list = []
    assert set_condition(conds, "Running", "True", "R", "m", "t1") is True
    assert set_condition(conds, "Running", "True", "R", "m", "t2") is False
    assert set_condition(conds, "Running", "True", "R2", "m2", "t3") is True
    assert conds[0]["lastTransitionTime"] == "t1" and conds[0]["reason"] == "R2"
    assert set_condition(conds, "Running", "False", "R2", "m2", "t4") is True
    assert conds[0]["lastTransitionTime"] == "t4" and len(conds) == 1


def _job(cs):
    return cs.elasticdl_v1alpha1().elastic_ai_jobs("default")


def _new_job():
    return {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
            "metadata": {"name": "j", "namespace": "default"}, "spec": {"master": {"image": "i"}}}


def test_update_status_retries_on_conflict_and_merges():
    cs = FakeClientset(_new_job())
    stale = _job(cs).get("j")
    fresh = meta.deep_copy(stale)
    fresh["status"] = {"phase": "Running"}
    _job(cs).update_status(fresh)  # someone else wrote meanwhile
    calls = []

    def mutate(obj):
        calls.append(meta.resource_version(obj))
        obj.setdefault("status", {})["startTime"] = "2026-01-02T03:04:05Z"
        return True

    written = update_status(_job(cs), stale, mutate)
    assert len(calls) == 2  # first on the stale copy (409), then on the re-read object
    assert written["status"] == {"phase": "Running", "startTime": "2026-01-02T03:04:05Z"}
    assert "status" not in stale  # the cached object is never modified


def test_update_status_skips_the_write_without_change_and_gives_up_after_retries():
    cs = FakeClientset(_new_job())
    obj = _job(cs).get("j")
    cs.clear_actions()
    assert update_status(_job(cs), obj, lambda o: False) is None
    assert cs.actions() == []
    cs.prepend_reactor("update", "elasticaijobs/status", lambda a: (True, None, errors.ConflictError("again")))
    with pytest.raises(errors.ConflictError):
        update_status(_job(cs), obj, lambda o: True, retries=3)
    assert len([a for a in cs.actions() if a.verb == "update"]) == 3


def test_events_aggregate_repeats_by_patching_count():
    cs = FakeClientset()
    now = [datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)]
    rec = EventRecorder(cs, "sedna-gm", host="h", now=lambda: now[0])
    job = {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
           "metadata": {"name": "j", "namespace": "default", "uid": "u"}}
    rec.event(job, "Warning", "InvalidSpec", "spec.master.image: is required")
    now[0] = datetime(2026, 1, 2, 3, 4, 9, tzinfo=timezone.utc)
    rec.event(job, "Warning", "InvalidSpec", "spec.master.image: is required")
    rec.event(job, "Normal", "SuccessfulCreate", "created")
    events = {e["reason"]: e for e in cs.core_v1().events("default").list()["items"]}
    assert len(events) == 2
    ev = events["InvalidSpec"]
    assert ev["count"] == 2 and ev["type"] == "Warning" and ev["source"]["component"] == "sedna-gm"
    assert ev["firstTimestamp"] == "2026-01-02T03:04:05Z" and ev["lastTimestamp"] == "2026-01-02T03:04:09Z"
    assert ev["involvedObject"] == {"apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
                                    "namespace": "default", "name": "j", "uid": "u", "resourceVersion": ""}
    # an aggregated event deleted by someone starts over
    cs.core_v1().events("default").delete(meta.name(ev))
    assert rec.event(job, "Warning", "InvalidSpec", "spec.master.image: is required")["count"] == 1


def test_the_recorder_forgets_events_after_the_aggregation_interval():
    """A process that records a new message every round keeps the last 10 minutes' worth of events to aggregate,
    not the bound's (4,096) after hours: a repeat after that starts a new Event."""
    cs = FakeClientset()
    t = [0.0]
    rec = EventRecorder(cs, "sedna-gm", host="h", timer=lambda: t[0])
    job = {"kind": "IncrementalLearningJob", "metadata": {"name": "j", "namespace": "default", "uid": "u"}}
    for n in range(100):
        rec.event(job, "Normal", "RoundCompleted", f"round {n} completed")
        t[0] += 60.0  # a round a minute
    assert len(rec._seen) == 9  # rounds 91-99: those of the last 10 minutes
    assert rec.event(job, "Normal", "RoundCompleted", "round 99 completed")["count"] == 2  # within the interval
    assert rec.event(job, "Normal", "RoundCompleted", "round 80 completed")["count"] == 1  # forgotten: a new Event


def test_event_recorder_never_raises_and_is_bounded():
    cs = FakeClientset()
    cs.prepend_reactor("create", "events", lambda a: (True, None, errors.ForbiddenError("no")))
    rec = EventRecorder(cs, "sedna-gm", cache_size=2)
    obj = {"kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}
    assert rec.event(obj, "Normal", "R", "m") is None
    with pytest.raises(ValueError):
        rec.event(obj, "Info", "R", "m")


def test_recreated_pods_ttl_with_injected_timer():
    t = [0.0]
    rp = RecreatedPods(ttl=5, timer=lambda: t[0])
    assert rp.try_mark("ns/p") is True
    assert rp.try_mark("ns/p") is False and "ns/p" in rp
    t[0] = 5.1
    assert "ns/p" not in rp and rp.try_mark("ns/p") is True
    rp.unmark("ns/p")
    assert len(rp) == 0


def test_job_state_is_one_record_per_uid_cleared_in_one_place():
    t = [0.0]
    states = JobStates(ttl=5, timer=lambda: t[0])
    job = {"metadata": {"name": "a", "namespace": "ns", "uid": "u1"}}
    state = states.for_job(job)
    states.prevent_recreation.add("ns/a")
    assert states.recreated_pods.try_mark("ns/p", "u1") is True
    state.note_slot_created("ns/a-worker")
    assert states.for_job(job) is state and states.by_key("ns/a") is state
    assert states.for_job({"metadata": {"name": "b", "namespace": "ns", "uid": "u2"}}) is not state
    # a job deleted and created again under the same name starts clean
    again = states.for_job({"metadata": {"name": "a", "namespace": "ns", "uid": "u3"}})
    assert again is not state and not again.slots_created
    assert "ns/a" not in states.prevent_recreation and "ns/p" not in states.recreated_pods
    assert states.get("u1") is None and len(states) == 2
    states.forget("ns/a", "u-other")  # another incarnation's forget leaves this one alone
    assert states.by_key("ns/a") is again
    states.forget("ns/a")
    assert states.by_key("ns/a") is None and states.get("u3") is None and len(states) == 1


def test_appended_conditions_keep_only_the_newest():
    conditions: list[dict] = []
    for n in range(100):  # a service whose state flaps for a year
        append_condition(conditions, {"type": ("Running", "Failed")[n % 2], "status": "True", "message": str(n)})
    assert len(conditions) == MAX_APPENDED_CONDITIONS
    assert [c["message"] for c in conditions] == [str(n) for n in range(100 - MAX_APPENDED_CONDITIONS, 100)]
