"""The edge half of ``hack.bench_gm``'s IncrementalLearningJob runs: our ``sedna-lc`` on the two edge nodes the jobs
name and the worker simulator (``workersim``) playing their pods, as ``test/interop`` sets them up, the LCs' edge
link pointed at whichever GM runs (ours or Go Sedna's). Without them a job never gets past its first condition
``Train/Waiting``; with them each job runs one whole round Train → Eval → Deploy.

* ``edge-1`` holds Dataset ``data-1`` (an index of ``SAMPLES`` lines under its rootfs, written before the LC starts):
  with ``trainProb`` 0.8 that is more than the train trigger's ``THRESHOLD`` new samples, so every job's trigger
  fires at its LC's first check (every ``CHECK_PERIOD_SECONDS``), and only once: a second round would need new
  samples.
* ``edge-2`` runs every job's train, eval and inference worker; the simulated train and eval workers work
  ``--run-seconds`` before they report. The deploy trigger (``precision_delta[0] > 0.1``) fires on the simulator's
  default eval metrics (the new model wins), hot update off: the eval node's LC copies the trained model to the
  deploy Model and the GM restarts the inference worker (``Deploy/Completed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hack._procs import cpu_seconds, memory_mb, stop_processes, use_testkit

__all__ = ["CHECK_PERIOD_SECONDS", "DATASET_NODE", "EDGE_NODES", "ROUND", "SAMPLES", "THRESHOLD", "WORKER_NODE",
           "EdgeSide", "condition_counts", "deploy_completed", "full_rounds", "il_job_spec", "last_conditions",
           "start_edge", "train_waiting"]

DATASET_NODE, WORKER_NODE = "edge-1", "edge-2"
EDGE_NODES = (DATASET_NODE, WORKER_NODE)
DATASET_URL = "/data/1.txt"  # Dataset data-1 (hack.bench_gm.referenced_objects)
SAMPLES = 20
THRESHOLD = 5
CHECK_PERIOD_SECONDS = 1
DATASET_CHECK_PERIOD = "0.3"  # the LC's dataset count period (seconds; its default is 60)
ROUND = ("Train/Running", "Train/Completed", "Eval/Running", "Eval/Completed", "Deploy/Completed")


def il_job_spec(run_seconds: float) -> dict[str, Any]:
    """An IncrementalLearningJob's spec on the nodes above, its train and eval workers working ``run_seconds``."""
    def template(node: str) -> dict[str, Any]:
        return {"metadata": {"annotations": {"sandbox.sedna.io/worker-delay-seconds": str(run_seconds)}},
                "spec": {"nodeName": node, "containers": [{"name": "w", "image": "il:bench"}]}}

    return {"dataset": {"name": "data-1", "trainProb": 0.8}, "initialModel": {"name": "little"},
            "trainSpec": {"template": template(WORKER_NODE), "trigger": {
                "checkPeriodSeconds": CHECK_PERIOD_SECONDS,
                "condition": {"operator": ">", "threshold": THRESHOLD, "metric": "num_of_samples"}}},
            "evalSpec": {"template": template(WORKER_NODE)},
            "deploySpec": {"model": {"name": "big"}, "hardExampleMining": {"name": "IBT"},
                           "template": template(WORKER_NODE),
                           "trigger": {"condition": {"operator": ">", "threshold": 0.1,
                                                     "metric": "precision_delta[0]"}}},
            "outputDir": "/output"}


def _stages(obj: Mapping[str, Any]) -> list[tuple[Any, Any]]:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return [(c.get("stage"), c.get("type")) for c in conditions if isinstance(c, Mapping)]


def train_waiting(obj: Mapping[str, Any]) -> bool:
    """The job's first condition is there (``Train/Waiting``): the GM's own work, without any LC."""
    return ("Train", "Waiting") in _stages(obj)


def deploy_completed(obj: Mapping[str, Any]) -> bool:
    """One round done (``Deploy/Completed``), as ``hack/local_up_sample.py`` judges a learning job."""
    return ("Deploy", "Completed") in _stages(obj)


def condition_counts(objs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many objects have each ``stage/type`` condition (each counted once per object)."""
    counts: dict[str, int] = {}
    for obj in objs:
        for stage, kind in set(_stages(obj)):
            name = f"{stage}/{kind}"
            counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def last_conditions(objs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many objects are at each ``stage/type`` as their last condition (where the unfinished ones wait)."""
    counts: dict[str, int] = {}
    for obj in objs:
        stages = _stages(obj)
        name = f"{stages[-1][0]}/{stages[-1][1]}" if stages else "-"
        counts[name] = counts.get(name, 0) + 1
    return dict(sorted(counts.items()))


def full_rounds(objs: Iterable[Mapping[str, Any]]) -> int:
    """How many objects went through every stage of ``ROUND`` (Train → Eval → Deploy), none ``Failed``."""
    whole = 0
    for obj in objs:
        seen = {f"{stage}/{kind}" for stage, kind in _stages(obj)}
        whole += set(ROUND) <= seen and not any(s.endswith("/Failed") for s in seen)
    return whole


@dataclass
class EdgeSide:
    """The running LCs and worker simulator (``procs``: a ``testkit.procs.Processes``, logs in its directory)."""

    procs: Any

    def pids(self) -> dict[str, int]:
        return {name: proc.pid for name, proc in self.procs.procs.items()}

    def cpu_seconds(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids().items()}

    def peak_rss_mb(self) -> dict[str, float]:
        return {name: round(memory_mb(pid)[1], 1) for name, pid in self.pids().items()}

    def log_tails(self, chars: int = 1500) -> dict[str, str]:
        return {name: self.procs.log(name)[-chars:] for name in self.procs.procs}

    def stop(self) -> None:
        """SIGTERM each (the worker simulator first, then the LCs); kill whatever is left."""
        stop_processes(*reversed(self.procs.procs.values()))
        self.procs.cleanup()


def start_edge(workdir: Path, kubeconfig: Path, gm_address: str) -> EdgeSide:
    """Write the Dataset's index on ``edge-1``, start an LC per edge node connected to the GM at ``gm_address``
    (``host:port``), wait until both are connected, then start the worker simulator; logs in ``workdir``."""
    use_testkit()
    from testkit.procs import Processes, http_get, start_lc, start_workersim
    from testkit.wait import wait_for

    rootfs = {node: workdir / f"rootfs-{node}" for node in EDGE_NODES}
    index = rootfs[DATASET_NODE] / DATASET_URL.lstrip("/")
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("".join(f"images/{i}.jpg {i % 3}\n" for i in range(SAMPLES)), encoding="utf-8")
    procs = Processes(workdir)
    edge = EdgeSide(procs)
    try:
        urls = {node: start_lc(procs, node, gm_address, rootfs[node], "--dataset-check-period", DATASET_CHECK_PERIOD,
                               "--log-level", "warning")[1] for node in EDGE_NODES}
        for node, url in urls.items():
            wait_for(f"the LC of {node} connected to the GM", lambda u=url: http_get(u + "/readyz")[0] == 200,
                     timeout=60)
        start_workersim(procs, kubeconfig, urls, rootfs)
    except BaseException:
        edge.stop()
        raise
    return edge
