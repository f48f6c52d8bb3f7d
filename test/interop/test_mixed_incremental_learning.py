"""An IncrementalLearningJob round with a hot update across two nodes, our half against Go Sedna's both ways: the
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


@pytest.mark.slow
def test_il_round_with_hot_update_our_gm_go_lcs(procs, tmp_path, go_bins) -> None:
    """Also Go's LC counting a grown Dataset again (the update of the Dataset test, which waits on its 60 s check)."""
    from testkit.interop import start_mixed

    system = start_mixed(procs, tmp_path, go_bins, "ours", "go")
    run_round(system, timeout=240)
    # Go's LC counts a grown Dataset again at its next check (every 60 s from its start: most of it went by in the
    # round); here rather than in a test of its own, which would wait a whole period
    system.write("edge-1", "/il/data/index.txt", lines(0, SAMPLES + 8))
    wait_for("Go's LC to count the grown Dataset", lambda: system.status("datasets", "il-ds").get("numberOfSamples"),
             check=lambda n: n == SAMPLES + 8, timeout=90)


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
