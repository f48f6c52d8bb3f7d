"""Incremental and lifelong learning jobs as the GM sends them to an LC (Go-shaped: the whole object, conditions
appended, each condition's ``data`` a JSON string), and an in-process sedna-lc under a ``FakeGM`` with an injectable
clock for its learning managers.

    conds = Conditions().add("Train", "Waiting")
    lc = LCUnderTest(tmp_path, gm, clock=FakeClock())
    lc.send("insert", il_job(conditions=conds.list))
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry

from apis.sedna.constants import condition_offset

from .edgepeers import FakeGM, make_frame
from .wait import wait_for

__all__ = [
    "ConditionHistory",
    "IL_HOT_UPDATE_ROUND",
    "IL_ROUND",
    "Conditions",
    "LCUnderTest",
    "dataset",
    "deploy_stage",
    "grow_dataset",
    "il_job",
    "job_history",
    "ll_job",
    "model",
    "assert_stages",
    "reported_model",
    "sample_lines",
    "send_il_objects",
    "template",
    "wall_clock",
]

NS = "default"
WALL_START = datetime(2026, 1, 5, 9, 0, 0)  # a Monday, 09:00 local time


def wall_clock(clock: Any, start: datetime = WALL_START) -> Callable[[], datetime]:
    """Local wall time that moves with ``clock`` (a ``workqueue.clock.FakeClock``)."""
    return lambda: start + timedelta(seconds=clock.now())


def template(image: str = "kubeedge/worker:v1") -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "worker", "image": image}]}}


def dataset(name: str = "ds", url: str = "/data/ds.txt", fmt: str = "txt", node: str = "edge-1",
            annotations: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"namespace": NS, "name": name, "uid": f"uid-{name}"}
    if annotations:
        md["annotations"] = annotations
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": md,
            "spec": {"url": url, "format": fmt, "nodeName": node}}


def model(name: str, url: str, fmt: str = "pb", annotations: dict[str, str] | None = None,
          devices: list[str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"namespace": NS, "name": name, "uid": f"uid-{name}"}
    if annotations:
        md["annotations"] = annotations
    spec: dict[str, Any] = {"url": url, "format": fmt}
    if devices:
        spec["device_soc_versions"] = devices
    return {"apiVersion": "sedna.io/v1alpha1", "kind": "Model", "metadata": md, "spec": spec}


class Conditions:
    """A job's ``status.conditions`` growing as the GM appends them; ``list`` is a copy of them so far."""

    def __init__(self) -> None:
        self._items: list[dict[str, Any]] = []

    def add(self, stage: str, ctype: str, input_section: dict[str, Any] | None = None,
            output: dict[str, Any] | None = None) -> Conditions:
        at = f"2026-01-05T09:{len(self._items) // 60:02d}:{len(self._items) % 60:02d}Z"
        data: dict[str, Any] = {}
        if input_section is not None:
            data["input"] = input_section
        if output is not None:
            data["output"] = output
        condition = {"type": ctype, "status": "True", "lastHeartbeatTime": at, "lastTransitionTime": at,
                     "reason": "", "message": "reported by lc" if data else "", "stage": stage}
        if data:
            condition["data"] = json.dumps(data)
        self._items.append(condition)
        return self

    @property
    def list(self) -> list[dict[str, Any]]:
        return [dict(c) for c in self._items]


def _trigger(spec: dict[str, Any] | None, default_metric: str = "num_of_samples") -> dict[str, Any]:
    return spec if spec is not None else {"condition": {"operator": ">", "threshold": 5, "metric": default_metric}}


def il_job(name: str = "il", *, conditions: list[dict[str, Any]] | None = None, train_prob: float = 0.8,
           train_trigger: dict[str, Any] | None = None, deploy_trigger: dict[str, Any] | None = None,
           output_dir: str = "/output/il", hot_update: bool = False, initial_eval_model: str | None = None,
           annotations: dict[str, str] | None = None, uid: str | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"namespace": NS, "name": name, "uid": uid or f"uid-{name}"}
    if annotations:
        md["annotations"] = annotations
    eval_spec: dict[str, Any] = {"template": template()}
    if initial_eval_model:
        eval_spec["initialEvalModel"] = {"name": initial_eval_model}
    deploy_model: dict[str, Any] = {"name": "deploy"}
    if hot_update:
        deploy_model.update(hotUpdateEnabled=True, pollPeriodSeconds=60)
    return {
        "apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob", "metadata": md,
        "spec": {
            "dataset": {"name": "ds", "trainProb": train_prob},
            "initialModel": {"name": "initial"},
            "trainSpec": {"template": template(), "trigger": _trigger(train_trigger)},
            "evalSpec": eval_spec,
            "deploySpec": {"model": deploy_model,
                           "trigger": _trigger(deploy_trigger, "precision_delta"),
                           "hardExampleMining": {"name": "IBT"}, "template": template()},
            "outputDir": output_dir,
        },
        "status": {"conditions": conditions or [], "startTime": "2026-01-05T09:00:00Z"},
    }


def ll_job(name: str = "ll", *, conditions: list[dict[str, Any]] | None = None, train_prob: float = 0.8,
           train_trigger: dict[str, Any] | None = None, output_dir: str = "/output/ll",
           annotations: dict[str, str] | None = None) -> dict[str, Any]:
    md: dict[str, Any] = {"namespace": NS, "name": name, "uid": f"uid-{name}"}
    if annotations:
        md["annotations"] = annotations
    return {
        "apiVersion": "sedna.io/v1alpha1", "kind": "LifelongLearningJob", "metadata": md,
        "spec": {
            "dataset": {"name": "ds", "trainProb": train_prob},
            "trainSpec": {"template": template(), "trigger": _trigger(train_trigger)},
            "evalSpec": {"template": template()},
            "deploySpec": {"template": template()},
            "outputDir": output_dir,
        },
        "status": {"conditions": conditions or [], "startTime": "2026-01-05T09:00:00Z"},
    }


class LCUnderTest:
    """A ``LocalController`` for node ``edge-1`` run in a thread against ``gm``, its rootfs at ``<tmp>/rootfs``, its
    database at ``db`` (reopen one to restart), its learning managers on ``clock``/``wall``. Datasets are counted on
    insert and then only when a test calls ``count_dataset`` (the check period is an hour)."""

    def __init__(self, tmp: Path, gm: FakeGM, clock: Any = None, wall: Callable[[], datetime] | None = None,
                 db: Path | None = None) -> None:
        from localcontroller.app import LocalController
        from localcontroller.config import LCConfig
        from localcontroller.managers.incrementallearning import IncrementalLearningManager
        from localcontroller.managers.lifelonglearning import LifelongLearningManager

        self.gm = gm
        self.rootfs = tmp / "rootfs"
        self.rootfs.mkdir(parents=True, exist_ok=True)
        cfg = LCConfig(gm_url=f"ws://{gm.address}/", node_name="edge-1", rootfs=str(self.rootfs),
                       bind_host="127.0.0.1", bind_port=0,
                       health_probe_host="127.0.0.1", health_probe_port=0, db_path=str(db or tmp / "lc.db"),
                       dataset_check_period=3600)
        self.lc = LocalController(cfg, CollectorRegistry())
        self.store = self.lc.store
        ctx = self.lc.ctx
        wall = wall or (wall_clock(clock) if clock is not None else None)
        for cls in (IncrementalLearningManager, LifelongLearningManager):
            ctx.managers[cls.kind] = cls(ctx, clock=clock, wall=wall)
        self.il = ctx.managers[IncrementalLearningManager.kind]
        self.ll = ctx.managers[LifelongLearningManager.kind]
        self.stop = threading.Event()
        self.code: list[int] = []
        self.thread = threading.Thread(target=lambda: self.code.append(self.lc.run(self.stop)), daemon=True)
        self.thread.start()
        wait_for("the LC's worker API", lambda: self.lc.server._httpd is not None)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.lc.server.port}"

    def path(self, host_path: str) -> Path:
        return self.rootfs / host_path.lstrip("/")

    def send(self, operation: str, obj: dict[str, Any]) -> None:
        """The GM sends ``obj`` (as Go's GM frames it: the lower-cased kind, the whole object)."""
        md = obj["metadata"]
        wait_for("the LC connected (hello answered)", self.lc.client.connected.is_set)
        self.gm.send(make_frame(md["namespace"], obj["kind"].lower(), md["name"], operation, obj))

    def count_dataset(self, name: str = "ds") -> int | None:
        return self.lc.ctx.managers["dataset"].check(f"{NS}/{name}")

    def reports(self, kind: str | None = None) -> list[tuple[str, str, dict[str, Any]]]:
        """``(kind, name, content)`` of every report in the outbox (all of them, with a GM that never acks)."""
        return [(e.kind, e.name, json.loads(e.content)) for e in self.store.iter_reports()
                if kind is None or e.kind == kind]

    def wait_reports(self, kind: str, count: int, timeout: float = 20.0) -> list[dict[str, Any]]:
        """The contents of the first ``count`` reports of ``kind``, once there are that many."""
        got = wait_for(f"{count} {kind} reports", lambda: self.reports(kind), timeout=timeout,
                       check=lambda r: len(r) >= count)
        return [content for _, _, content in got]

    def close(self) -> int:
        self.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the LC did not stop"
        return self.code[0]


def reported_model(url: str, fmt: str = "pb") -> dict[str, Any]:
    """A model as the LC reports it (Go's ``runtime.Model`` marshalled: ``classes`` always there)."""
    return {"format": fmt, "url": url, "classes": None}


def sample_lines(start: int, stop: int) -> list[str]:
    """Samples ``start`` … ``stop - 1`` of a txt Dataset: ``images/<i>.jpg <label>``."""
    return [f"images/{i}.jpg {i % 3}" for i in range(start, stop)]


def grow_dataset(lc: LCUnderTest, start: int, stop: int, url: str = "/data/ds.txt") -> None:
    """Append ``sample_lines(start, stop)`` to the Dataset file at host path ``url``."""
    path = lc.path(url)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.writelines(f"{line}\n" for line in sample_lines(start, stop))


def send_il_objects(lc: LCUnderTest, samples: int = 10) -> None:
    """A Dataset of ``samples`` samples and the Models ``initial`` and ``deploy``, sent by the GM."""
    grow_dataset(lc, 0, samples)
    lc.send("insert", dataset())
    lc.send("insert", model("initial", "/models/initial.pb"))
    lc.send("insert", model("deploy", "/models/deploy.pb"))


def deploy_stage(conds: Conditions, new: float, old: float, trained_url: str = "/output/il/train/1/model.pb"
                 ) -> Conditions:
    """A round up to Deploy/Waiting: trained ``trained_url``; eval ``precision`` ``new`` for it, ``old`` for the
    deployed model."""
    conds.add("Train", "Waiting").add("Train", "Ready")
    conds.add("Train", "Completed", output={"models": [{"format": "pb", "url": trained_url}]})
    conds.add("Eval", "Waiting").add("Eval", "Ready").add("Eval", "Completed", output={"models": [
        {"format": "pb", "url": trained_url, "metrics": {"precision": [new], "recall": [0.5]}},
        {"format": "pb", "url": "/models/deploy.pb", "metrics": {"precision": [old], "recall": [0.5]}}]})
    return conds.add("Deploy", "Waiting")


IL_ROUND = ["Train/Ready", "Train/Starting", "Train/Running", "Train/Completed",
            "Eval/Waiting", "Eval/Ready", "Eval/Starting", "Eval/Running", "Eval/Completed",
            "Deploy/Waiting", "Deploy/Ready", "Deploy/Completed", "Train/Waiting"]
"""The conditions (``stage/type``) a whole round appends after ``Train/Waiting`` (no hot update; LL's too)."""

IL_HOT_UPDATE_ROUND = [*IL_ROUND[:11], "Deploy/Starting", "Deploy/Running", "Deploy/Completed", "Train/Waiting"]
"""The same with the deploy Model's hot update: after ``Deploy/Ready`` the inference worker loads the new model
(``Deploy/Starting``, ``Deploy/Running``) before ``Deploy/Completed``."""


def assert_stages(got: list[str], expected: list[str]) -> None:
    """``got`` (``stage/type`` of a job's conditions) is exactly ``expected``, in order, except that a
    ``<Stage>/Running`` may be missing: the GM skips it when the stage's worker ends before it sees it run."""
    index = 0
    for want in expected:
        if index < len(got) and got[index] == want:
            index += 1
        elif not want.endswith("/Running"):
            raise AssertionError(f"conditions {got} differ from {expected} at {index} ({want} expected)")
    assert index == len(got), f"conditions {got} differ from {expected}: more than expected"


class ConditionHistory:
    """Every condition of one learning job in the order they were appended, followed by a watch on the job: our GM
    prunes a finished round's conditions from the object (docs/globalmanager.md, "Rounds"), so a test that checks a
    job's whole course reads it here. An entry follows its condition's later changes in place (a note, a late
    report's data) while the job still holds it. Its thread ends on ``close`` or once the API server is gone."""

    def __init__(self, client: Any, name: str) -> None:
        self._client, self._name = client, name
        self._lock = threading.Lock()
        self._items: list[dict[str, Any]] = []
        self._pruned_before_start: int | None = None  # the offset of the first version taken in
        self._stop = threading.Event()
        threading.Thread(target=self._follow, name=f"history-{name}", daemon=True).start()

    def feed(self, obj: dict[str, Any]) -> None:
        """Take in a version of the job: its conditions from the first Train/Waiting on are at their places over the
        job's life (those before it, kept from finished rounds, were taken in when they were appended)."""
        status = obj.get("status") or {}
        conditions = status.get("conditions") or []
        offset = condition_offset(status)
        start = 0 if offset == 0 else next((j for j, c in enumerate(conditions)
                                            if (c.get("stage"), c.get("type")) == ("Train", "Waiting")), len(conditions))
        with self._lock:
            if self._pruned_before_start is None:
                self._pruned_before_start = offset
            for j in range(start, len(conditions)):
                if offset + j < len(self._items):
                    self._items[offset + j] = conditions[j]
                else:
                    self._items.append(conditions[j])

    def conditions(self) -> list[dict[str, Any]]:
        """The job's conditions so far (its current version taken in first)."""
        self.feed(self._client.get(self._name))
        with self._lock:
            if self._pruned_before_start:
                raise AssertionError(
                    f"the condition history of {self._name} started after the GM had pruned "
                    f"{self._pruned_before_start} conditions of finished rounds: call job_history when the job is "
                    f"created, not once it may have moved on")
            return list(self._items)

    def states(self) -> list[str]:
        return [f"{c.get('stage')}/{c.get('type')}" for c in self.conditions()]

    def close(self) -> None:
        self._stop.set()

    def _follow(self) -> None:
        failures = 0
        while not self._stop.is_set() and failures < 50:
            try:
                listed = self._client.list(field_selector=f"metadata.name={self._name}")
                for obj in listed["items"]:
                    self.feed(obj)
                watch = self._client.watch(field_selector=f"metadata.name={self._name}", timeout_seconds=30,
                                           resource_version=listed["metadata"]["resourceVersion"])
                failures = 0
                for event in watch:
                    if self._stop.is_set():
                        watch.stop()
                        return
                    if event.type in ("ADDED", "MODIFIED") and isinstance(event.object, dict):
                        self.feed(event.object)
            except Exception:  # the API server going away ends the test's sandbox: try again, then give up
                failures += 1
                self._stop.wait(0.2)


_HISTORIES_LOCK = threading.Lock()


def job_history(cs: Any, resource: str, namespace: str, name: str) -> ConditionHistory:
    """The ``ConditionHistory`` of job ``namespace/name`` of ``resource`` (``incremental_learning_jobs``...) seen
    through ``cs`` (kept on it), started at the first call."""
    with _HISTORIES_LOCK:
        histories: dict[tuple[str, str, str], ConditionHistory] = cs.__dict__.setdefault("_condition_histories", {})
        history = histories.get((resource, namespace, name))
        if history is None:
            history = histories[(resource, namespace, name)] = ConditionHistory(
                getattr(cs.sedna_v1alpha1(), resource)(namespace), name)
        return history
