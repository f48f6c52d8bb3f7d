"""The incremental learning manager (Go ``managers/incrementallearning``): drives an IncrementalLearningJob's
Train → Eval → Deploy rounds on this node, on the skeleton of ``learning.JobManager``.

What it acts on (the job's last condition) and reports (``{phase, status, input?, output: null, message?}``):

| stage/type | node (GM downstream) | does | reports |
|---|---|---|---|
| Train/Waiting | dataset | train trigger on ``num_of_samples`` every ``checkPeriodSeconds``; fires: round + 1, writes ``<out>/data/train/<round>/data.txt`` (+ ``dataIndex.txt`` for an S3 Dataset) | Train/Ready, ``input: {models: [base], dataURL, dataIndexURL?, outputDir: <out>/train/<round>}`` |
| Eval/Waiting | dataset | writes the eval samples to ``<out>/data/eval/<round>/`` | Eval/Ready, ``input: {models: [trained, eval model], dataURL, dataIndexURL?}`` |
| Deploy/Waiting | eval | deploy trigger on the eval metrics and their ``<metric>_delta`` (new − old); fires without hot update: copies the trained model to the deploy Model's URL | Deploy/Ready (``Failed`` if the copy failed) with ``input: {models: [trained, deploy model]}``; not firing: Deploy/Completed (with a ``message`` when the trigger names a metric the eval did not report) |
| Deploy/Running, hot update | deploy | copies the trained model beside the hot-update config and to the deploy Model, writes ``model_config.json`` | nothing (the worker reports ``deploy`` ``completed``) |

The Deploy stage is acted on only by the node the job names for it (``sedna.io/Eval`` at Deploy/Waiting,
``sedna.io/Deploy`` at Deploy/Running; any node the GM sends it to while it names none): a copy of the job at that
stage on another node (our GM sends resident nodes the job's current copy after a restart) is left alone.

The base model is the initial Model in round 1, later the last Train/Completed output model with the initial
Model's format (the initial Model when there is none, where Go crashes); the trained model for eval and deploy is
the one with the eval/deploy Model's format. Deleting the job removes its hot-update directory; a ``delete`` that
only takes the job off this node keeps it (see ``on_delete``). ``model_config.json`` and the model file beside it
are replaced inside the existing directory, never the directory itself.
"""

from __future__ import annotations

import json
import posixpath
import shutil
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, NoReturn

from apis.sedna.constants import (
    MODEL_HOT_UPDATE_ANNOTATION,
    MODEL_HOT_UPDATE_CONTAINER_PREFIX,
    MODEL_HOT_UPDATE_HOST_PREFIX,
    stage_node_annotation,
)
from apis.sedna.v1alpha1.common import Stage, StageConditionType
from localcontroller.storage import StorageError, copy_between

from .learning import (
    CurrentStage,
    JobManager,
    JobRecord,
    NotReady,
    PathOutsideJob,
    RoundState,
    StageFailed,
    condition_models,
    eval_metrics,
    go_model,
    matching_model,
    model_of,
    upstream_message,
)
from .learning.datafiles import write_file
from .learning.jobmanager import Handler

__all__ = ["KIND", "IncrementalLearningManager", "go_time"]

KIND = "incrementallearningjob"
REPORT_KIND = "IncrementalLearningJob"

W, C = StageConditionType.WAITING, StageConditionType.COMPLETED


def go_time(at: datetime) -> str:
    """A time as Go's ``time.Time.String`` starts (``2006-01-02 15:04:05.000000 -0700 MST``)."""
    local = at if at.tzinfo is not None else at.astimezone()
    return local.strftime("%Y-%m-%d %H:%M:%S.%f %z %Z")


class IncrementalLearningManager(JobManager):
    kind = KIND
    report_kind = REPORT_KIND
    # as long as a train node's LC keeps a report for a job it does not hold yet (keptreports.PendingLimits.max_age)
    TRAINED_MODEL_WAIT_SECONDS = 3600.0

    def handler(self, rec: JobRecord, current: CurrentStage) -> tuple[str, Handler] | None:
        if current.type == W:
            found = {Stage.TRAIN: ("train", self.train), Stage.EVAL: ("eval", self.evaluate),
                     Stage.DEPLOY: ("deploy", self.deploy)}.get(current.stage)
        elif current.stage == Stage.DEPLOY and current.type == StageConditionType.RUNNING and _hot_update(rec):
            found = "hotupdate", self.hot_update
        else:
            return None
        if found is not None and current.stage == Stage.DEPLOY and not self._acts_on_deploy(rec, current):
            return None
        return found

    def _acts_on_deploy(self, rec: JobRecord, current: CurrentStage) -> bool:
        """Whether this node is the one for the Deploy stage: the eval node (``sedna.io/Eval``) decides at
        Deploy/Waiting, the deploy node (``sedna.io/Deploy``) hot-updates at Deploy/Running; when the job names none,
        the node the GM sent it to. Another node may hold a copy at that stage (a resident node after a GM restart,
        which sends each node the job's current copy) and must leave it alone: the trained model is on the named
        node, and a hot update elsewhere fails the stage."""
        # the eval node's LC takes the deploy decision (Go's GM sends it there), the deploy node's writes the hot update
        annotation = stage_node_annotation(Stage.EVAL if current.type == W else Stage.DEPLOY)
        named = str(_annotations(rec).get(annotation) or "")
        if not named or named == self.ctx.config.node_name:
            return True
        self.log_change(rec, "deploy-elsewhere", current.instance, "the Deploy stage is another node's: leaving it",
                        stage=f"{current.stage}/{current.type}", node=named, annotation=annotation)
        return False

    # -- models -----------------------------------------------------------------------------------------------------
    def _model(self, rec: JobRecord, *path: str) -> Mapping[str, Any] | None:
        """The Model object named at ``spec.<path...>.name`` (``None`` when the spec names none)."""
        node: Any = rec.spec
        for key in path:
            node = node.get(key) if isinstance(node, Mapping) else None
        name = node.get("name") if isinstance(node, Mapping) else None
        return self.model_object(rec, name) if name else None

    def _required_model(self, rec: JobRecord, *path: str) -> Mapping[str, Any]:
        obj = self._model(rec, *path)
        if obj is None:
            raise StageFailed(f"spec.{'.'.join(path)}.name is empty")
        return obj

    def model_urls(self, rec: JobRecord) -> list[str]:
        """The URLs of the initial, deploy and initial eval Models (those received)."""
        urls = []
        for path in (("initialModel",), ("deploySpec", "model"), ("evalSpec", "initialEvalModel")):
            try:
                obj = self._model(rec, *path)
            except NotReady:
                continue
            if obj is not None:
                urls.append(model_of(obj)["url"])
        return urls

    def _trained(self, rec: JobRecord, reference: Mapping[str, Any], role: str) -> dict[str, Any]:
        """The trained model for the ``role`` model, confined to the job's places (``PathOutsideJob``)."""
        trained = matching_model(reference, condition_models(rec.obj, Stage.TRAIN, C))
        if trained is None:
            raise StageFailed(f"no output model of the last Train/Completed condition has the {role} model's format "
                              f"{reference.get('format')!r}")
        self.confine(rec, [trained], f"the trained model for the {role} model")
        return trained

    def _await_trained_model(self, rec: JobRecord, current: CurrentStage, reference: Mapping[str, Any]) -> NoReturn:
        """Eval/Waiting without a trained model: the train worker's report may still be on its way (Go's GM completes
        Train from the pod's phase, without the model, and the train node's LC may still hold the report); a later
        copy of the job carries it. Wait for it (``NotReady``, as Go's LC, which retries forever) up to
        ``TRAINED_MODEL_WAIT_SECONDS`` from when this node first saw the stage, then fail the stage saying why."""
        if rec.model_wait is None or rec.model_wait[0] != current.instance:
            rec.model_wait = (current.instance, self.clock.now())
        what = (f"no output model of the last Train/Completed condition has the eval model's format "
                f"{reference.get('format')!r}")
        waited = self.clock.now() - rec.model_wait[1]
        if waited >= self.TRAINED_MODEL_WAIT_SECONDS:
            raise StageFailed(f"{what} after waiting {int(waited)} s for the train worker's report")
        raise NotReady(f"{what} yet: waiting for the train worker's report (up to "
                       f"{int(self.TRAINED_MODEL_WAIT_SECONDS)} s)")

    def train_models(self, rec: JobRecord, round_number: int) -> list[dict[str, Any]] | None:
        initial = model_of(self._required_model(rec, "initialModel"))
        if round_number <= 1:
            return [go_model(initial)]
        trained = matching_model(initial, condition_models(rec.obj, Stage.TRAIN, C))
        if trained is None:
            self.log_change(rec, "base-model", ("initial", round_number),
                            "no trained model of an earlier round fits the initial model; training from it",
                            level="warning", round=round_number)
            return [go_model(initial)]
        try:
            self.confine(rec, [trained], "the trained base model")
        except PathOutsideJob as exc:  # the stage that used it failed already; a new round starts afresh
            self.log_change(rec, "base-model", ("outside", round_number),
                            "the last trained model is outside the job's places; training from the initial model",
                            level="warning", round=round_number, reason=exc.message)
            return [go_model(initial)]
        return [go_model(trained)]

    # -- stages -----------------------------------------------------------------------------------------------------
    def evaluate(self, rec: JobRecord, current: CurrentStage) -> None:
        """Eval/Waiting (Go ``evalTask``)."""
        deploy = model_of(self._required_model(rec, "deploySpec", "model"))
        initial_eval = self._model(rec, "evalSpec", "initialEvalModel")
        eval_model = model_of(initial_eval) if initial_eval is not None else deploy
        self.require_dataset(rec)
        trained = matching_model(eval_model, condition_models(rec.obj, Stage.TRAIN, C))
        if trained is None:
            self._await_trained_model(rec, current, eval_model)
        self.confine(rec, [trained], "the trained model to evaluate")
        files = self.write_data(rec, "eval", rec.state.round, rec.state.eval_samples())
        input_section = {"models": [go_model(trained), go_model(eval_model)], "dataURL": files.data_url,
                         "dataIndexURL": files.index_url}
        self.answer(rec, current, "eval", upstream_message(Stage.EVAL, StageConditionType.READY, input_section))

    def deploy(self, rec: JobRecord, current: CurrentStage) -> None:
        """Deploy/Waiting (Go ``deployTask``): decide from the eval metrics, copy the model unless hot update."""
        hot = _hot_update(rec)
        deploy_obj = self._required_model(rec, "deploySpec", "model")
        eval_obj = None if hot else self._model(rec, "evalSpec", "initialEvalModel")
        pending = rec.state.pending.get("deploy")
        why_not = ""
        if isinstance(pending, dict) and pending.get("instance") == current.instance:
            fire = bool(pending.get("fire"))
        else:
            trigger = self.trigger(rec, (rec.spec.get("deploySpec") or {}).get("trigger"), "spec.deploySpec.trigger")
            stats = self._deploy_stats(rec)
            fire = trigger.trigger(stats)
            missing = trigger.missing_metrics(stats) if stats else []
            if missing:  # said on the Deploy/Completed condition: otherwise no round would ever deploy, silently
                why_not = (f"spec.deploySpec.trigger: metric {', '.join(map(repr, missing))} is not among the "
                           f"evaluated metrics ({', '.join(stats)}); not deploying")
            if fire and not hot:  # copies follow: a restart must finish this decision, not take another
                self.save(rec, lambda s: s.pending.__setitem__("deploy", {"instance": current.instance, "fire": True}))
        if not fire:
            self.answer(rec, current, "deploy", upstream_message(Stage.DEPLOY, C, message=why_not))
            return
        deploy = model_of(deploy_obj)
        trained = self._trained(rec, deploy, "deploy")
        input_section = {"models": [go_model(trained), go_model(deploy)]}
        if not hot:
            refresh_eval_model = self._eval_refresh(rec, eval_obj)
            try:
                copy_between(self.job_storage(rec), trained["url"], self.model_storage(rec, deploy_obj), deploy["url"])
                refresh_eval_model()
            except StorageError as exc:
                raise StageFailed(f"copying the trained model to the deploy model failed: {exc}",
                                  input_section) from None
        self.answer(rec, current, "deploy", upstream_message(Stage.DEPLOY, StageConditionType.READY, input_section))

    def _deploy_stats(self, rec: JobRecord) -> dict[str, Any]:
        """Each metric of the new model and ``<metric>_delta`` = new − old, elementwise (Go ``triggerDeployTask``);
        ``{}`` (the trigger does not fire) unless there are exactly two well-formed results."""
        try:
            results = eval_metrics(condition_models(rec.obj, Stage.EVAL, C) or [])
        except ValueError as exc:
            self.log.warning("eval results are malformed: not deploying", object=rec.key, error=str(exc))
            return {}
        if len(results) != 2:
            self.log.warning("expected 2 evaluation results (new, old): not deploying", object=rec.key,
                             results=len(results))
            return {}
        new, old = results
        stats: dict[str, Any] = {}
        for metric, values in new.items():
            stats[metric] = values
            stats[f"{metric}_delta"] = [n - o for n, o in zip(values, old.get(metric, []), strict=False)]
        return stats

    def _eval_refresh(self, rec: JobRecord, eval_obj: Mapping[str, Any] | None) -> Callable[[], None]:
        """With ``evalSpec.initialEvalModel``, the copy of the trained model of its format over it (as Go does); the
        trained model is confined now, before anything is copied (``PathOutsideJob``). A no-op without one."""
        trained = matching_model(model_of(eval_obj), condition_models(rec.obj, Stage.TRAIN, C)) if eval_obj else None
        if eval_obj is None or trained is None:
            return lambda: None
        self.confine(rec, [trained], "the trained model for the initial eval model")
        source, target, storage = trained["url"], model_of(eval_obj)["url"], self.model_storage(rec, eval_obj)
        return lambda: copy_between(self.job_storage(rec), source, storage, target)

    def hot_update(self, rec: JobRecord, current: CurrentStage) -> None:
        """Deploy/Running with hot update (Go ``hotModelUpdateDeployTask``)."""
        config = _annotations(rec).get(MODEL_HOT_UPDATE_ANNOTATION)
        if not config:
            raise NotReady(f"the job has no {MODEL_HOT_UPDATE_ANNOTATION} annotation yet")
        deploy_obj = self._required_model(rec, "deploySpec", "model")
        eval_obj = self._model(rec, "evalSpec", "initialEvalModel")
        deploy = model_of(deploy_obj)
        trained = self._trained(rec, deploy, "deploy")
        pending = rec.state.pending.get("hotupdate")
        if isinstance(pending, dict) and pending.get("instance") == current.instance:
            version = str(pending.get("time"))
        else:  # stored first: a restart rewrites the same version, so the worker does not reload twice
            version = go_time(self.wall())
            self.save(rec, lambda s: s.pending.__setitem__("hotupdate", {"instance": current.instance,
                                                                          "time": version}))
        file_name = posixpath.basename(trained["url"])
        model_file = posixpath.join(posixpath.dirname(config), file_name)
        model_config = {"model_config": {"model_path": posixpath.join(MODEL_HOT_UPDATE_CONTAINER_PREFIX, file_name),
                                         "model_update_time": version}}
        host = self.storages.get(None)
        refresh_eval_model = self._eval_refresh(rec, eval_obj)
        try:
            copy_between(self.job_storage(rec), trained["url"], host, model_file)
            copy_between(self.job_storage(rec), trained["url"], self.model_storage(rec, deploy_obj), deploy["url"])
            refresh_eval_model()
            write_file(host, config, [json.dumps(model_config, indent=1, sort_keys=True)])
        except StorageError as exc:
            raise StageFailed(f"model hot update failed: {exc}", {"models": [go_model(trained), go_model(deploy)]}) \
                from None

        def done(state: RoundState) -> None:
            state.answered["hotupdate"] = current.instance
            state.pending.pop("hotupdate", None)

        self.save(rec, done)
        self.log.info("model hot update written", object=rec.key, config=config, model=model_file, version=version)

    def on_delete(self, key: str, copies: list[Mapping[str, Any]], gone: bool) -> None:
        """A job deleted for good: remove its hot-update directory (only below ``/var/lib/sedna/model-hot-update``,
        where the GM puts it). A job only taken off this node keeps it: an inference pod here mounted that directory
        when it started (a hostPath mount holds the directory itself), so a directory removed and made again later
        would take the next ``model_config.json`` out of its sight."""
        config = next((c for c in (_config_file(obj) for obj in copies) if c), "")
        if not config:
            return
        host_dir = posixpath.dirname(posixpath.normpath("/" + config.lstrip("/")))
        if not gone:
            self.log.info("kept the hot-update directory: the job was only taken off this node", object=key,
                          path=host_dir)
            return
        if not host_dir.startswith(MODEL_HOT_UPDATE_HOST_PREFIX + "/"):
            self.log.warning("not removing a hot-update directory outside the hot-update prefix", object=key,
                             path=host_dir, prefix=MODEL_HOT_UPDATE_HOST_PREFIX)
            return
        try:
            path = self.storages.get(None).local_path(host_dir)
            if path.exists():
                shutil.rmtree(path)
        except (StorageError, OSError) as exc:
            self.log.warning("cannot remove the hot-update directory", object=key, path=host_dir, error=str(exc))
            return
        self.log.info("removed the hot-update directory", object=key, path=host_dir)


def _config_file(obj: Mapping[str, Any]) -> str:
    """The job's ``sedna.io/model-hot-update-config`` annotation (``""`` when it has none)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(MODEL_HOT_UPDATE_ANNOTATION)
    return value if isinstance(value, str) else ""


def _annotations(rec: JobRecord) -> Mapping[str, Any]:
    return (rec.obj.get("metadata") or {}).get("annotations") or {}


def _hot_update(rec: JobRecord) -> bool:
    return bool(((rec.spec.get("deploySpec") or {}).get("model") or {}).get("hotUpdateEnabled"))
