"""The pure parts of ``hack.bench_gm``, ``hack.bench_gm_kinds`` and ``hack.bench_gm_edge``: what an
IncrementalLearningJob run creates, when a job counts as done, how its conditions are summed up and how a paired round
compares (no benchmark runs here)."""

from __future__ import annotations

from typing import Any

from hack import bench_gm, bench_gm_kinds
from hack import bench_gm_edge as il_edge


def job(*stages: str) -> dict[str, Any]:
    return {"metadata": {"name": "il"}, "status": {"conditions": [
        {"stage": s.split("/")[0], "type": s.split("/")[1]} for s in stages]}}


WHOLE_ROUND = ("Train/Waiting", "Train/Ready", "Train/Starting", "Train/Running", "Train/Completed", "Eval/Waiting",
               "Eval/Ready", "Eval/Starting", "Eval/Running", "Eval/Completed", "Deploy/Waiting", "Deploy/Ready",
               "Deploy/Completed", "Train/Waiting")


def test_an_il_job_is_done_after_one_round_not_at_its_first_condition():
    done = bench_gm_kinds.KINDS["IncrementalLearningJob"].done
    assert not done(job("Train/Waiting"))
    assert not done(job(*WHOLE_ROUND[:10]))
    assert done(job(*WHOLE_ROUND))  # back at Train/Waiting for the next round: still done
    assert not done({"metadata": {"name": "il"}})
    assert il_edge.train_waiting(job("Train/Waiting")) and not il_edge.train_waiting({"status": {}})


def test_the_il_job_names_the_edge_nodes_and_fires_on_the_seeded_dataset():
    spec = bench_gm_kinds.incremental_learning_job("il-00001", 5.0)["spec"]
    assert spec["dataset"]["name"] == "data-1"
    dataset = next(o for o in bench_gm_kinds.referenced_objects() if o["metadata"]["name"] == "data-1")
    assert (dataset["spec"]["nodeName"], dataset["spec"]["url"]) == (il_edge.DATASET_NODE, il_edge.DATASET_URL)
    for part in ("trainSpec", "evalSpec", "deploySpec"):
        template = spec[part]["template"]
        assert template["spec"]["nodeName"] == il_edge.WORKER_NODE
        assert template["metadata"]["annotations"]["sandbox.sedna.io/worker-delay-seconds"] == "5.0"
    condition = spec["trainSpec"]["trigger"]["condition"]
    assert il_edge.SAMPLES * spec["dataset"]["trainProb"] > condition["threshold"]  # fires at the first check


def test_condition_counts_count_each_condition_once_per_job():
    jobs = [job(*WHOLE_ROUND), job(*WHOLE_ROUND[:6]), job()]
    counts = il_edge.condition_counts(jobs)
    assert counts["Train/Waiting"] == 2 and counts["Eval/Waiting"] == 2 and counts["Deploy/Completed"] == 1
    assert il_edge.last_conditions(jobs) == {"-": 1, "Eval/Waiting": 1, "Train/Waiting": 1}


def test_a_full_round_needs_every_stage_and_no_failure():
    # a stage whose pod the GM never saw Running (it ended first) has no Running: the worker's report was lost
    lost_report = [s for s in WHOLE_ROUND if s != "Train/Running"]
    failed = [*WHOLE_ROUND[:10], "Eval/Failed", "Deploy/Completed"]
    assert il_edge.full_rounds([job(*WHOLE_ROUND), job(*lost_report), job(*failed)]) == 1


def test_a_paired_round_compares_what_both_finished():
    ours = {"objects": 100, "steady": True, "steady_seconds": 22.0, "phase_set_seconds": 2.0,
            "gm_cpu_ms_per_job": 90.0, "gm_peak_rss_mb": 60.0}
    capped = {"objects": 100, "steady": False, "in_expected_state": 0, "steady_seconds": 240.0,
              "phase_set_seconds": 200.0, "gm_cpu_ms_per_job": 30.0, "gm_peak_rss_mb": 50.0}
    paired = bench_gm.compare(ours, capped)
    assert (paired["go_done"], paired["time_ratio"], paired["cpu_per_job_ratio"]) == (0, None, None)
    assert (paired["phase_set_ratio"], paired["peak_rss_ratio"]) == (0.01, 1.2)
    assert bench_gm.compare(ours, {**capped, "phase_set_seconds": None})["phase_set_ratio"] is None
