"""IncrementalLearningJob / LifelongLearningJob objects and a harness around the ``JobController`` of their kinds (with
the Model router on the same fake clientset and edge link), for the learningjob unit tests."""

from __future__ import annotations

from typing import Any

from sedna_test_helpers import NOW, NS, Harness, dataset, model
from testkit import wait_for

from apis import meta
from apis import resources as r
from apis.record import EventRecorder
from globalmanager.controllers import incrementallearning, lifelonglearning
from globalmanager.controllers.context import ControllerContext
from globalmanager.controllers.learningjob.conditions import REPORTED_BY_LC
from globalmanager.controllers.learningjob.controller import to_edge
from globalmanager.controllers.learningjob.placement import EdgePlacement
from globalmanager.controllers.model import ModelController
from globalmanager.messagelayer.dispatcher import Outcome, Report, UpstreamDispatcher

IL_KIND, LL_KIND = "IncrementalLearningJob", "LifelongLearningJob"
LC = "http://lc.test:9100"
KB = "http://kb.test:9020"


def template(node: str, **annotations: str) -> dict[str, Any]:
    md: dict[str, Any] = {"annotations": annotations} if annotations else {}
    return {"metadata": md, "spec": {"nodeName": node, "containers": [{"name": "w", "image": "worker:1"}]}}


TRIGGER = {"condition": {"operator": ">", "threshold": 100, "metric": "num_of_samples"}}


def il_job(name: str = "il", hot: bool = False, credential: str = "", initial_eval: str = "",
           output: str = "/output") -> dict[str, Any]:
    deploy_model: dict[str, Any] = {"name": "deploy-model"}
    if hot:
        deploy_model.update(hotUpdateEnabled=True, pollPeriodSeconds=30)
    spec: dict[str, Any] = {
        "dataset": {"name": "ds", "trainProb": 0.8},
        "initialModel": {"name": "initial-model"},
        "trainSpec": {"template": template("train-node"), "trigger": TRIGGER},
        "evalSpec": {"template": template("eval-node")},
        "deploySpec": {"model": deploy_model, "trigger": TRIGGER,
                       "hardExampleMining": {"name": "IBT", "parameters": [{"key": "threshold_img", "value": "0.9"}]},
                       "template": template("deploy-node")},
        "outputDir": output,
    }
    if credential:
        spec["credentialName"] = credential
    if initial_eval:
        spec["evalSpec"]["initialEvalModel"] = {"name": initial_eval}
    return {"apiVersion": "sedna.io/v1alpha1", "kind": IL_KIND, "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def ll_job(name: str = "ll", output: str = "s3://out/ll/", credential: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "dataset": {"name": "ds", "trainProb": 0.8},
        "trainSpec": {"template": template("train-node"), "trigger": TRIGGER},
        "evalSpec": {"template": template("eval-node")},
        "deploySpec": {"template": template("deploy-node")},
        "outputDir": output,
    }
    if credential:
        spec["credentialName"] = credential
    return {"apiVersion": "sedna.io/v1alpha1", "kind": LL_KIND, "metadata": {"name": name, "namespace": NS},
            "spec": spec}


IL_REFS = (model("initial-model", "/models/initial.pb"), model("deploy-model", "/models/deploy.pb"),
           dataset("ds", "/data/train.txt", "ds-node"))
LL_REFS = (dataset("ds", "/data/train.txt", "ds-node"),)


def refs_for(kind: str) -> tuple[dict[str, Any], ...]:
    """The Models and Dataset the kind's sample job references."""
    return IL_REFS if kind == IL_KIND else LL_REFS


def condition(stage: str, ctype: str, data: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    cond: dict[str, Any] = {"type": ctype, "status": "True", "stage": stage, "lastHeartbeatTime": NOW,
                            "lastTransitionTime": NOW, **extra}
    if data is not None:
        import json
        cond["data"] = json.dumps(data, separators=(",", ":"))
        cond.setdefault("message", REPORTED_BY_LC)
    return cond


TRAIN_READY = {"input": {"models": [{"format": "pb", "url": "/models/initial.pb"}],
                         "dataURL": "/output/data/train/1/data.txt", "outputDir": "/output/train/1"}}
EVAL_READY = {"input": {"models": [{"format": "pb", "url": "/output/train/1/model.pb"},
                                   {"format": "pb", "url": "/models/deploy.pb"}],
                        "dataURL": "/output/data/eval/1/data.txt"}}
LL_TRAIN_READY = {"input": {"dataURL": "s3://out/ll/data/train/1/data.txt", "outputDir": "s3://out/ll/train/1"}}
LL_EVAL_READY = {"input": {"models": [{"format": "pkl", "url": "s3://out/ll/train/1/index.pkl"}],
                           "dataURL": "s3://out/ll/data/eval/1/data.txt", "outputDir": "s3://out/ll/eval/1"}}
READY = {(IL_KIND, "Train"): TRAIN_READY, (IL_KIND, "Eval"): EVAL_READY,
         (LL_KIND, "Train"): LL_TRAIN_READY, (LL_KIND, "Eval"): LL_EVAL_READY}
"""The input of the Train/Eval Ready report our LC makes for the sample jobs (paths inside their places)."""


class LearningHarness(Harness):
    """The controller of ``kind`` over a FakeClientset (no report grace), with the Model router (IL) on the same
    edge link."""

    def __init__(self, kind: str, *objects: dict[str, Any], **kwargs: Any) -> None:
        definition = incrementallearning.KIND if kind == IL_KIND else lifelonglearning.KIND
        kwargs.setdefault("lc_server", LC)
        kwargs.setdefault("kb_server", KB)
        super().__init__(definition, definition.resource, *objects, **kwargs)
        self.controller.ctx.state.report_grace = 0.0
        self.router: ModelController | None = None
        if kind == IL_KIND:
            ctx = ControllerContext(clientset=self.cs, informer_factory=self.factory,
                                    recorder=EventRecorder(self.cs, "sedna-gm"), edge=self.edge)
            self.router = ModelController(ctx)
            self.placement.router = self.router
        self.prefix = f"{kind.lower()}.sedna.io/"

    @property
    def placement(self) -> EdgePlacement:
        """The kind's placement (its state)."""
        return self.controller.ctx.state.placement

    def to_edge(self, operation: str, job: dict[str, Any] | None, old: dict[str, Any] | None = None) -> None:
        """The kind's ``to_edge`` for ``job`` (as the job's event handlers call it)."""
        assert job is not None
        to_edge(self.controller.ctx, operation, job, old)

    def close(self) -> None:
        super().close()
        if self.router is not None:
            self.router.loop.queue.shut_down()

    def set_conditions(self, name: str, *conditions: dict[str, Any], start: bool = True) -> None:
        status: dict[str, Any] = {"conditions": list(conditions)}
        if start:
            status["startTime"] = NOW
        self.set_status(self.job_resource, name, status)

    def annotate(self, name: str, **annotations: str) -> None:
        job = self.job(name)
        job["metadata"].setdefault("annotations", {}).update(annotations)
        self.jobs.update(job)

    def add_pod(self, name: str, worker_type: str, phase: str, node: str = "", order: int = 0) -> dict[str, Any]:
        """A worker pod of job ``name`` as the GM creates it, in ``phase``."""
        job = self.job(name)
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"generateName": f"{name}-{worker_type}-", "namespace": NS,
                            "labels": {self.prefix + "name": name, self.prefix + "uid": meta.uid(job),
                                       self.prefix + "worker-type": worker_type},
                            "annotations": {"sedna.io/condition-count": str(order)},
                            "ownerReferences": [meta.new_controller_ref(job)]},
               "spec": {"nodeName": node, "containers": [{"name": "w", "image": "worker:1"}]}}
        created = self.client(r.PODS).create(pod)
        created["status"] = {"phase": phase}
        return self.client(r.PODS).update_status(created)

    def pods(self, worker_type: str | None = None) -> list[dict[str, Any]]:
        pods = self.objects(r.PODS)
        return [p for p in pods if worker_type is None or meta.labels(p).get(self.prefix + "worker-type") == worker_type]

    def step(self, name: str) -> Any:
        """Refresh the caches, sync once, refresh again."""
        self.refresh()
        forget = self.sync(name)
        self.refresh()
        return forget

    def states(self, name: str) -> list[tuple[str, str]]:
        return [(c["stage"], c["type"]) for c in self.conditions(name)]

    def report(self, name: str, node: str, content: dict[str, Any]) -> None:
        self.refresh()
        self.edge.report(node, NS, self.job_resource.resource[:-1], name, content)


def dispatch(h: LearningHarness, *messages: Any) -> list[Any]:
    """The outcomes of ``messages`` (``UpstreamMessage``s) handled through the edge link's upstream dispatcher with
    the harness's handler for its kind, in order."""


    kind = h.job_resource.resource[:-1]
    outcomes: list[Outcome] = []
    dispatcher = UpstreamDispatcher(lambda report, outcome: outcomes.append(outcome), workers=1)
    dispatcher.add_handler(kind, h.edge.handlers[kind])
    dispatcher.start()
    try:
        h.refresh()
        for i, message in enumerate(messages):
            dispatcher.submit(Report(message, id=str(i)))
        wait_for("the reports handled", lambda: len(outcomes) == len(messages))
    finally:
        dispatcher.stop()
    return outcomes
