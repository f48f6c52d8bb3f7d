"""The lifelong learning manager (Go ``managers/lifelonglearning``): drives a LifelongLearningJob's
Train → Eval → Deploy rounds on this node, on the skeleton of ``learning.JobManager``. No Models and no deploy
trigger; the deployed knowledge base index is ``<out>/deploy/index.pkl``; txt and csv Datasets (``data.csv`` starts
with the Dataset's header line).

| stage/type | does | reports |
|---|---|---|
| Train/Waiting | train trigger on ``num_of_samples`` every ``checkPeriodSeconds``; fires: round + 1, writes ``<out>/data/train/<round>/data.txt`` or ``data.csv`` | Train/Ready, ``input: {dataURL, dataIndexURL?, outputDir: <out>/train/<round>}`` |
| Eval/Waiting | writes the eval samples to ``<out>/data/eval/<round>/`` | Eval/Ready, ``input: {models: <Train/Completed output models>, dataURL, dataIndexURL?, outputDir: <out>/eval/<round>}`` |
| Deploy/Waiting | with Eval/Completed output models: copies ``models[0].url`` to ``<out>/deploy/index.pkl`` | Deploy/Ready ``input: {models: [{format, url}]}`` (``Failed`` if the copy failed); without: Deploy/Completed |
"""

from __future__ import annotations

from apis.sedna.v1alpha1.common import Stage, StageConditionType
from localcontroller.storage import StorageError

from .learning import (
    CurrentStage,
    JobManager,
    JobRecord,
    StageFailed,
    condition_models,
    go_model,
    upstream_message,
)
from .learning.jobmanager import Handler

__all__ = ["DEPLOY_INDEX", "KIND", "LifelongLearningManager"]

KIND = "lifelonglearningjob"
REPORT_KIND = "LifelongLearningJob"
DEPLOY_INDEX = "deploy/index.pkl"


class LifelongLearningManager(JobManager):
    kind = KIND
    report_kind = REPORT_KIND

    def handler(self, rec: JobRecord, current: CurrentStage) -> tuple[str, Handler] | None:
        if current.type != StageConditionType.WAITING:
            return None
        return {Stage.TRAIN: ("train", self.train), Stage.EVAL: ("eval", self.evaluate),
                Stage.DEPLOY: ("deploy", self.deploy)}.get(current.stage)

    def evaluate(self, rec: JobRecord, current: CurrentStage) -> None:
        """Eval/Waiting (Go ``evalTask``): evaluate what the last training produced."""
        self.require_dataset(rec)
        models = condition_models(rec.obj, Stage.TRAIN, StageConditionType.COMPLETED)
        if not models:
            raise StageFailed("the last Train/Completed condition has no output models to evaluate")
        self.confine(rec, models, "a trained model to evaluate")
        round_number = rec.state.round
        files = self.write_data(rec, "eval", round_number, rec.state.eval_samples())
        input_section = {"models": [go_model(m) for m in models], "dataURL": files.data_url,
                         "dataIndexURL": files.index_url, "outputDir": f"{self.output_dir(rec)}/eval/{round_number}"}
        self.answer(rec, current, "eval", upstream_message(Stage.EVAL, StageConditionType.READY, input_section))

    def deploy(self, rec: JobRecord, current: CurrentStage) -> None:
        """Deploy/Waiting (Go ``deployTask``): deploy the evaluated knowledge base index. The Dataset's node's (as every
        Waiting stage of LL): a copy on another node (the deploy node, resident, after a GM restart) waits for a
        Dataset that never comes there instead of deploying the index where it is not."""
        self.require_dataset(rec)
        models = condition_models(rec.obj, Stage.EVAL, StageConditionType.COMPLETED)
        if not models:
            self.answer(rec, current, "deploy", upstream_message(Stage.DEPLOY, StageConditionType.COMPLETED))
            return
        source = {"format": models[0].get("format"), "url": models[0].get("url")}
        input_section = {"models": [go_model(source)]}
        self.confine(rec, [source], "the evaluated knowledge base index")
        target = f"{self.output_dir(rec)}/{DEPLOY_INDEX}"
        try:
            self.job_storage(rec).copy_file(str(source["url"] or ""), target)
        except StorageError as exc:
            raise StageFailed(f"copying the evaluated knowledge base index to {target} failed: {exc}",
                              input_section) from None
        self.answer(rec, current, "deploy", upstream_message(Stage.DEPLOY, StageConditionType.READY, input_section))
