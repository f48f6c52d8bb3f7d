"""IncrementalLearningJob rounds with a hot update across two nodes, our half against Go Sedna's both ways: the
Dataset on ``edge-1``, the train, eval and inference workers on ``edge-2`` (the topology of the main job), the deploy
Model hot-updated through the directory the inference pod mounted when it started (the worker simulator reads it
through that handle, as a pod does). With Go's LCs the round waits on their 60 s checks: ``slow``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit import wait_for
from testkit.interop import MixedSedna

pytestmark = pytest.mark.e2e

SAMPLES = 12  # above the train trigger's threshold from the start: the round begins at the LC's first check


def lines(start: int, stop: int) -> str:
    return "".join(f"images/{i}.jpg {i % 3}\n" for i in range(start, stop))


# A train or eval worker works (minutes on a cluster) before it reports; Go's GM sends the job to the worker's node
# only once it sees the pod Running, which takes it a few seconds here (its client-go is throttled to 5 QPS).
WORK_SECONDS = "5"


def template(node: str, delay: str = "0.5") -> dict[str, Any]:
    return {"metadata": {"annotations": {"sandbox.sedna.io/worker-delay-seconds": delay,
                                         "sandbox.sedna.io/worker-period-seconds": "1"}},
            "spec": {"nodeName": node, "containers": [{"name": "worker", "image": "kubeedge/sedna-example:v0.4.0"}]}}


GO_GM_LOSES_REPORTS = (
    "Go's GM race, on a cluster too (issue 25): a worker's report that Go's GM appends (appendStatusCondition, "
    "pkg/globalmanager/controllers/incrementallearning/upstream.go:87-98 at SEDNA_COMMIT) while its controller syncs "
    "the job is overwritten by updateJobStatus (incrementallearningjob.go:475-487: the whole status from the "
    "informer's copy), and it completes the stage from the pod's phase without the model or metrics; with workers "
    "that report just before they exit it happens in about one run in five here")


def create_job(system: MixedSedna) -> None:
    system.write("edge-1", "/il/data/index.txt", lines(0, SAMPLES))
    system.create("datasets", "Dataset", "il-ds", {"url": "/il/data/index.txt", "format": "txt",
                                                   "nodeName": "edge-1"})
    for role in ("initial", "deploy"):
        url = system.host_path(f"/il/models/{role}/model.pb")
        for node in system.rootfs:
            system.write(node, url, f"the {role} model\n")
        system.create("models", "Model", f"il-{role}", {"url": url, "format": "pb"})
    system.create("incremental_learning_jobs", "IncrementalLearningJob", "il", {
        "dataset": {"name": "il-ds", "trainProb": 0.8},
        "initialModel": {"name": "il-initial"},
        "trainSpec": {"template": template("edge-2", WORK_SECONDS), "trigger": {
            "checkPeriodSeconds": 1, "condition": {"operator": ">", "threshold": 5, "metric": "num_of_samples"}}},
        "evalSpec": {"template": template("edge-2", WORK_SECONDS)},
        "deploySpec": {"model": {"name": "il-deploy", "hotUpdateEnabled": True, "pollPeriodSeconds": 1},
                       "trigger": {"condition": {"operator": ">", "threshold": 0.1, "metric": "precision_delta[0]"}},
                       "hardExampleMining": {"name": "IBT"}, "template": template("edge-2")},
        "outputDir": "/il/output",
    })


def stages(system: MixedSedna) -> list[str]:
    return [f"{c.get('stage')}/{c.get('type')}"
            for c in system.status("incremental_learning_jobs", "il").get("conditions") or []]


def run_round(system: MixedSedna, timeout: float) -> list[str]:
    create_job(system)
    got = wait_for("the round to reach the hot update", lambda: stages(system), timeout=timeout,
                   check=lambda s: "Deploy/Running" in s or "Deploy/Completed" in s  # ended without a deploy
                   or any(x.endswith("/Failed") for x in s))
    assert "Deploy/Running" in got and not any(s.endswith("/Failed") for s in got), " ".join(got)
    # the inference worker polls every second: the hot update is done within a few polls or never
    got = wait_for("the hot update", lambda: stages(system), timeout=30,
                   check=lambda s: "Deploy/Completed" in s or any(x.endswith("/Failed") for x in s))
    assert "Deploy/Completed" in got and not any(s.endswith("/Failed") for s in got), " ".join(got)
    # the deploy node's LC put the trained model beside model_config.json in the pod's mounted directory (both GMs
    # name the host's config file in the job's annotation; only ours also puts it on the pod)
    config = system.get("incremental_learning_jobs", "il")["metadata"]["annotations"]["sedna.io/model-hot-update-config"]
    written = json.loads((system.rootfs["edge-2"] / config.lstrip("/")).read_text())["model_config"]
    assert written["model_path"] == "/model-hot-update/model_finetune_tensorflow.pb"
    # the trained model also goes to the deploy Model's URL: ours on the node; Go's LC writes it without its rootfs
    # prefix (into its container on a cluster), here under the test's tmp (host_path), and leaves the node's alone
    trained = (system.rootfs["edge-2"] / "il/output/train/1/model_finetune_tensorflow.pb").read_text()
    deploy = system.host_path("/il/models/deploy/model.pb")
    on_node = (system.rootfs["edge-2"] / deploy.lstrip("/")).read_text()
    if system.lc == "go":
        assert (on_node, Path(deploy).read_text()) == ("the deploy model\n", trained)
    else:
        assert on_node == trained and not Path(deploy).exists()
    return got


@pytest.mark.xfail(strict=False, reason=GO_GM_LOSES_REPORTS)
def test_il_round_with_hot_update_go_gm_our_lcs(procs, tmp_path, go_bins) -> None:
    """Our LCs keep a report that comes before the job (or relay it when the job is taken off the node before it
    arrived) and the dataset node waits at Eval/Waiting for the trained model (tested deterministically in
    test/unit/localcontroller: test_lc_kept_reports.py, test_il_manager.py); what is left is Go's GM's race."""
    from testkit.interop import start_mixed

    system = start_mixed(procs, tmp_path, go_bins, "go", "ours")
    run_round(system, timeout=120)


def this_round(system: MixedSedna) -> list[dict[str, Any]]:
    """The job's conditions from its last Train/Waiting on."""
    conditions = system.status("incremental_learning_jobs", "il").get("conditions") or []
    start = max((i for i, c in enumerate(conditions) if (c.get("stage"), c.get("type")) == ("Train", "Waiting")),
                default=0)
    return conditions[start:]


def round_stages(system: MixedSedna) -> list[str]:
    return [f"{c.get('stage')}/{c.get('type')}" for c in this_round(system)]


@pytest.mark.slow
def test_il_rounds_with_hot_update_our_gm_go_lcs(procs, tmp_path, go_bins) -> None:
    """Two rounds: the second begins with Go's LC counting the grown Dataset again (the update of the Dataset test,
    which waits on its 60 s check) and trains from the model the first trained, which our GM kept in the job's
    bounded status (the latest Train/Completed with an output) when the first round left it; it is followed up to its
    deploy decision."""
    from testkit.interop import start_mixed

    system = start_mixed(procs, tmp_path, go_bins, "ours", "go")
    run_round(system, timeout=240)
    trained = "/il/output/train/1/model_finetune_tensorflow.pb"
    # Go's LC counts a grown Dataset again at its next check (every 60 s from its start: most of it went by in the
    # round); here rather than in a test of its own, which would wait a whole period
    system.write("edge-1", "/il/data/index.txt", lines(0, SAMPLES + 8))
    wait_for("Go's LC to count the grown Dataset", lambda: system.status("datasets", "il-ds").get("numberOfSamples"),
             check=lambda n: n == SAMPLES + 8, timeout=90)
    status = system.status("incremental_learning_jobs", "il")
    assert status["round"] == 2 and status["prunedConditions"] > 0
    assert [f"{c['stage']}/{c['type']}" for c in status["conditions"]][-1] == "Train/Waiting"
    events = [e for e in system.cs.core_v1().events("default").list()["items"] if e.get("reason") == "RoundCompleted"]
    assert [e["message"].split(":")[0] for e in events] == ["round 1 completed"] and trained in events[0]["message"]
    # Go's LC evaluates the train trigger on its next job check (10 s): round 2's base model is round 1's
    got = wait_for("round 2's Train/Ready", lambda: [c for c in this_round(system)
                                                      if (c["stage"], c["type"]) == ("Train", "Ready")],
                   check=bool, timeout=60)
    assert json.loads(got[0]["data"])["input"]["models"][0]["url"] == trained
    # and evaluates the model round 2 trained (the latest Train/Completed). Go's LC on edge-2 then never takes round
    # 2's deploy decision: it resets its deploy trigger only in trainTask, which runs on the dataset's node (Sedna
    # issue #381; the same with Go's GM, whose job stays on edge-2 too)
    got = wait_for("round 2's Deploy/Waiting", lambda: round_stages(system), timeout=240,
                   check=lambda s: "Deploy/Waiting" in s or any(x.endswith("/Failed") for x in s))
    assert "Deploy/Waiting" in got and not any(s.endswith("/Failed") for s in got), " ".join(got)
    ready = next(c for c in this_round(system) if (c["stage"], c["type"]) == ("Eval", "Ready"))
    assert json.loads(ready["data"])["input"]["models"][0]["url"] == trained.replace("/train/1/", "/train/2/")


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=GO_GM_LOSES_REPORTS + "; Go's LC then waits at Eval/Waiting forever")
def test_go_gm_and_go_lcs_get_past_eval_on_the_sandbox(procs, tmp_path, go_bins) -> None:
    """Go's own halves run a round on the sandbox as on a cluster (followed up to its deploy). With workers that
    reported 0.5 s after they started, the train report reached Go's LC on ``edge-2`` before Go's GM, which sends the
    job there only once it sees the pod Running, had sent it: Go's LC drops such a report (``monitorWorker``,
    pkg/localcontroller/managers/incrementallearning/incrementallearningjob.go:1238-1241 at SEDNA_COMMIT) and waits at
    Eval/Waiting forever for a model no condition carries. A worker that works a few seconds, as real ones do,
    reports after the job arrived."""
    from testkit.interop import start_mixed

    system = start_mixed(procs, tmp_path, go_bins, "go", "go")
    create_job(system)
    wait_for("Eval/Waiting", lambda: stages(system), timeout=120,
             check=lambda s: "Eval/Waiting" in s or any(x.endswith("/Failed") for x in s))
    # Go's LC starts the evaluation at its next job check (every 10 s; 75 s covers a dataset check too)
    got = wait_for("the round past Eval", lambda: stages(system), timeout=75,
                   check=lambda s: any(x.startswith("Deploy/") for x in s) or any(x.endswith("/Failed") for x in s))
    assert any(s.startswith("Deploy/") for s in got) and not any(s.endswith("/Failed") for s in got), " ".join(got)


def test_il_round_survives_a_restart_of_our_gm_at_deploy_running(procs, tmp_path) -> None:
    from testkit.interop import start_mixed

    system = start_mixed(procs, tmp_path, None, "ours", "ours")  # type: ignore[arg-type] - no Go peer here
    create_job(system)
    wait_for("Deploy/Running", lambda: stages(system), timeout=120,
             check=lambda s: "Deploy/Running" in s or any(x.endswith("/Failed") for x in s))
    system.restart_gm()
    got = wait_for("the hot update", lambda: stages(system), timeout=30,
                   check=lambda s: "Deploy/Completed" in s or any(x.endswith("/Failed") for x in s))
    assert "Deploy/Completed" in got and not any(s.endswith("/Failed") for s in got), " ".join(got)
