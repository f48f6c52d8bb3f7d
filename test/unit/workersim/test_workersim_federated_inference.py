"""Federated learning, joint inference and the kinds whose SDK never reports: exact bodies and pod endings."""

from __future__ import annotations

import re

from testkit import wait_for
from testkit.workers import sedna_worker_pod

FL = "federatedlearningjob"
JI = "jointinferenceservice"
SDK_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def fl_train_pod(name, annotations, job_uid="fl-uid", **env):
    base = {"AGG_PORT": "7363", "AGG_IP": "surface-aggregation.default", "WORKER_NAME": f"trainworker-{name}",
            "JOB_NAME": "surface", "PARTICIPANTS_COUNT": "2", "NAMESPACE": "default", "MODEL_NAME": "surface-model",
            "DATASET_NAME": "edge1-ds", "LC_SERVER": "http://localhost:9100", "TRANSMITTER": "ws",
            "MODEL_URL": "/downloads/models/surface", "TRAIN_DATASET_URL": "/downloads/data/edge1/train.txt", **env}
    return sedna_worker_pod(FL, "train", "surface", base, name=f"surface-train-{name}", annotations=annotations,
                            job_uid=job_uid)


def test_fl_train_reports_every_round_then_completed(make_simulator, run_pod, lc, phase):
    make_simulator()
    pod = run_pod(fl_train_pod("a", {"sandbox.sedna.io/worker-delay-seconds": "0",
                                     "sandbox.sedna.io/worker-rounds": "2",
                                     "sandbox.sedna.io/worker-sample-count": "240"}))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    bodies = lc.bodies()
    assert [(b["status"], b["ownerInfo"]["currentRound"]) for b in bodies] == [("running", 1), ("completed", 2)]
    for round_number, body in enumerate(bodies, 1):
        info = body.pop("ownerInfo")
        assert set(info) == {"currentRound", "sampleCount", "startTime", "updateTime"}
        assert info["sampleCount"] == 240
        assert SDK_TIME.fullmatch(info["startTime"]) and SDK_TIME.fullmatch(info["updateTime"])
        assert body == {
            "name": "trainworker-a", "namespace": "default", "ownerName": "surface", "ownerKind": "default",
            "kind": "train", "status": body["status"],
            "results": [{"format": "", "url": "/downloads/models/surface/surface-model",
                         "metrics": {"accuracy": [round(0.5 + 0.1 * round_number, 6)],
                                     "loss": [round(0.5 - 0.1 * round_number, 6)]}}]}


def test_fl_without_sdk_quirks_reports_its_kind(make_simulator, run_pod, lc, phase):
    make_simulator()
    pod = run_pod(fl_train_pod("q", {"sandbox.sedna.io/worker-delay-seconds": "0", "sandbox.sedna.io/worker-rounds": "1",
                                     "sandbox.sedna.io/worker-sdk-quirks": "false"}))
    wait_for("the pod to succeed", lambda: phase(pod), check=lambda p: p == "Succeeded")
    assert [b["ownerKind"] for b in lc.bodies()] == [FL]


def test_fl_aggregation_ends_once_every_trainer_of_its_job_ended(make_simulator, run_pod, phase, cs, mocker):
    looks = mocker.spy(make_simulator(), "_job_pods")  # the aggregator looks at its job's pods
    agg = run_pod(sedna_worker_pod(FL, "aggregation", "surface", {"WORKER_NAME": "aggworker-1", "JOB_NAME": "surface"},
                                   name="surface-aggregation-x", job_uid="fl-uid"))
    wait_for("the aggregator's first look at its job (no trainer yet)", lambda: looks.call_count >= 1)
    # a trainer of another job (other uid) does not count
    other = run_pod(fl_train_pod("other", {"sandbox.sedna.io/worker-delay-seconds": "3600"}, job_uid="other-uid"))
    slow = run_pod(fl_train_pod("slow", {"sandbox.sedna.io/worker-delay-seconds": "3600"}))
    fast = run_pod(fl_train_pod("fast", {"sandbox.sedna.io/worker-delay-seconds": "0",
                                         "sandbox.sedna.io/worker-rounds": "1"}))
    wait_for("the fast trainer to succeed", lambda: phase(fast), check=lambda p: p == "Succeeded")
    pods = cs.core_v1().pods("default")
    current = pods.get(slow["metadata"]["name"])
    pods.update_status({**current, "status": {**current["status"], "phase": "Failed"}})
    wait_for("the aggregator to end", lambda: phase(agg), check=lambda p: p == "Succeeded")
    # it served while it had no trainer and while the slow trainer trained: its pod ended only after the slow one
    status_writes = [(a.name, a.object["status"]["phase"]) for a in cs.actions()
                     if a.verb == "update" and a.subresource == "status" and a.object is not None]
    assert status_writes.index((agg["metadata"]["name"], "Succeeded")) > status_writes.index((slow["metadata"]["name"], "Failed"))
    assert phase(other) == "Running"


def ji_edge_pod(annotations, **env):
    base = {"BIG_MODEL_IP": "ji-cloud.default", "BIG_MODEL_PORT": "5000", "HEM_NAME": "IBT",
            "HEM_PARAMETERS": '[{"key":"threshold_img","value":"0.9"}]', "LC_SERVER": "http://localhost:9100",
            "NAMESPACE": "default", "SERVICE_NAME": "ji", "WORKER_NAME": "edgeworker-abcde",
            "MODEL_URL": "/downloads/models/little/model.pb", **env}
    return sedna_worker_pod(JI, "edge", "ji", base, name="ji-deployment-edge-7d9f-x2", annotations=annotations)


def test_ji_edge_reports_cumulative_inference_counters_every_period(make_simulator, run_pod, lc, phase):
    make_simulator()
    pod = run_pod(ji_edge_pod({"sandbox.sedna.io/worker-period-seconds": "0.05",
                               "sandbox.sedna.io/worker-inferences-per-period": "4",
                               "sandbox.sedna.io/worker-hard-examples-per-period": "1"},
                              JOB_NAME="ji"))  # sedna-gm sets JOB_NAME so that the SDK names its service
    bodies = wait_for("three periodic reports", lc.bodies, check=lambda b: len(b) >= 3)
    for period, body in enumerate(bodies[:3], 1):
        info = body.pop("ownerInfo")
        assert SDK_TIME.fullmatch(info.pop("startTime")) and SDK_TIME.fullmatch(info.pop("updateTime"))
        assert info == {"inferenceNumber": 4 * period, "hardExampleNumber": period, "uploadCloudRatio": 0.25}
        assert body == {"name": "edgeworker-abcde", "namespace": "default", "ownerName": "ji", "ownerKind": JI,
                        "kind": "inference", "results": []}
    assert phase(pod) == "Running"


def test_ji_edge_without_inferences_sends_nothing_and_quirk_owner_name(make_simulator, run_pod, lc):
    simulator = make_simulator()
    run_pod(ji_edge_pod({"sandbox.sedna.io/worker-period-seconds": "0.05",
                         "sandbox.sedna.io/worker-inferences-per-period": "0"}))
    quirky = ji_edge_pod({"sandbox.sedna.io/worker-period-seconds": "0.05",
                          "sandbox.sedna.io/worker-sdk-quirks": "true"}, WORKER_NAME="edgeworker-quirk")
    quirky["metadata"]["name"] = "ji-deployment-edge-7d9f-q"
    run_pod(quirky)
    wait_for("a report of the quirky worker", lc.bodies, check=lambda b: len(b) >= 1)
    assert {b["name"] for b in lc.bodies()} == {"edgeworker-quirk"}
    assert {b["ownerName"] for b in lc.bodies()} == {"sedna"}  # the SDK's JOB_NAME default shadows SERVICE_NAME
    assert len(simulator.active_workers()) == 2


def test_services_whose_sdk_never_reports_keep_running(make_simulator, run_pod, lc, phase):
    simulator = make_simulator()
    pods = [
        run_pod(sedna_worker_pod(JI, "cloud", "ji", {"WORKER_NAME": "cloudworker-1", "SERVICE_NAME": "ji"})),
        run_pod(sedna_worker_pod("featureextractionservice", "fe", "fe", {"WORKER_NAME": "w1"})),
        run_pod(sedna_worker_pod("objectsearchservice", "userworker", "os", {"WORKER_NAME": "w2"})),
        run_pod(sedna_worker_pod("objecttrackingservice", "trackingworker", "ot", {"WORKER_NAME": "w3"})),
    ]
    wait_for("four workers", simulator.active_workers, check=lambda w: len(w) == 4)
    # a later positive signal: a JointInference edge worker reporting every 0.05 s has reported twice (the services'
    # workers had as long to report)
    run_pod(ji_edge_pod({"sandbox.sedna.io/worker-period-seconds": "0.05",
                         "sandbox.sedna.io/worker-inferences-per-period": "1"}))
    wait_for("two reports of the marker", lc.bodies, check=lambda b: len(b) >= 2)
    assert {b["name"] for b in lc.bodies()} == {"edgeworker-abcde"} and {phase(p) for p in pods} == {"Running"}


def test_reid_and_video_analytics_jobs_end_without_reports(make_simulator, run_pod, lc, phase):
    make_simulator()
    now = {"sandbox.sedna.io/worker-delay-seconds": "0"}
    reid = run_pod(sedna_worker_pod("reidjob", "reid", "reid", {"WORKER_NAME": "abcde", "JOB_NAME": "reid"},
                                    annotations=now))
    va = run_pod(sedna_worker_pod("videoanalyticsjob", "videoanalytics", "va", {"WORKER_NAME": "fghij"},
                                  annotations={**now, "sandbox.sedna.io/worker-fail": "report",
                                               "sandbox.sedna.io/worker-exit-code": "7"}))
    wait_for("the reid pod to succeed", lambda: phase(reid), check=lambda p: p == "Succeeded")
    wait_for("the va pod to fail", lambda: phase(va), check=lambda p: p == "Failed")
    assert lc.reports == []
