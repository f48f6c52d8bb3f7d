"""The pods of an IncrementalLearningJob as Sedna's GM builds them (``createPod`` / ``createInferPod``).

``data`` is the decoded ``data`` of the job's last condition (the LC's Ready report); ``original`` below is
``input.dataIndexURL`` when set, else the Dataset's URL (mounted ``Indirect`` when they differ, Sedna issue #35).

* Train (worker type ``train``, ``trainSpec.template``, ``hostNetwork``, ``OnFailure``): env ``NAMESPACE``,
  ``JOB_NAME``, ``WORKER_NAME=train-worker-<5 random>``, ``LC_SERVER``; mounts ``BASE_MODEL_URL`` = the first input
  model (downloaded; the initial Model's Secret when it is the initial Model's URL, else the job's), ``MODEL_URL`` =
  ``input.outputDir`` (the job's Secret, not downloaded), ``TRAIN_DATASET_URL`` = ``input.dataURL`` (downloaded,
  the job's Secret), ``ORIGINAL_DATASET_URL`` = original (downloaded, the Dataset's Secret).
* Eval (worker type ``Eval``, ``evalSpec.template``, ``hostNetwork``, ``OnFailure``): env ``NAMESPACE``,
  ``JOB_NAME``, ``WORKER_NAME=eval-worker-<5 random>``, ``LC_SERVER``; mounts ``MODEL_URLS`` = every input model
  (``;``-joined, downloaded; Secrets as above), ``TEST_DATASET_URL`` = ``input.dataURL`` and ``ORIGINAL_DATASET_URL``
  (downloaded, the Dataset's Secret).
* Inference (worker type ``inference``, ``deploySpec.template``, ``hostNetwork``): mount ``MODEL_URL`` = the deploy
  Model (downloaded, its Secret); env ``NAMESPACE``, ``JOB_NAME``, ``WORKER_NAME=inferworker-<5 random>``,
  ``HEM_NAME``, ``HEM_PARAMETERS`` (JSON ``[{"key","value"}]``), ``LC_SERVER``; with
  ``deploySpec.model.hotUpdateEnabled`` also the hot-update mount, ``MODEL_HOT_UPDATE``,
  ``MODEL_POLL_PERIOD_SECONDS``, ``MODEL_HOT_UPDATE_CONFIG`` and annotation ``sedna.io/model-hot-update-config``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.sedna.constants import EVAL
from apis.sedna.v1alpha1 import ILJobSpec
from globalmanager.controllers.jointinference.workers import hem_parameters
from globalmanager.controllers.learningjob.conditions import (
    InvalidConditionData,
    condition_input,
    input_model_urls,
)
from globalmanager.controllers.learningjob.workers import Secrets, original_dataset_mount, url_of
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.pods import pod_from_template
from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import INFERENCE_WORKER, TRAIN_WORKER, ModelHotUpdate, WorkerParam

__all__ = ["eval_pod", "inference_pod", "train_pod"]


def _spec(job: Obj) -> Mapping[str, Any]:
    return job.get("spec") or {}


def _model_secret(job: Obj, refs: dict[str, dict[str, Any]], secrets: Secrets, url: str) -> Obj | None:
    initial = refs["initialModel"]
    if url == url_of(initial):
        return secrets.of(initial, f"initial model {meta.name(initial)}")
    return secrets.of(job, f"incremental job {meta.name(job)}")


def _base_env(job: Obj, worker: str, lc_server: str) -> dict[str, str]:
    return {"NAMESPACE": meta.namespace(job), "JOB_NAME": meta.name(job),
            "WORKER_NAME": f"{worker}-{rand_string(5)}", "LC_SERVER": lc_server}


def train_pod(job: Obj, data: Mapping[str, Any], refs: dict[str, dict[str, Any]], secrets: Secrets,
              lc_server: str) -> dict[str, Any]:
    inp = condition_input(data)
    models = input_model_urls(data)
    if not models:
        raise InvalidConditionData("the Ready condition names no input model")
    dataset = refs["dataset"]
    job_secret = secrets.of(job, f"incremental job {meta.name(job)}")
    param = WorkerParam(TRAIN_WORKER, env=_base_env(job, "train-worker", lc_server), host_network=True,
                        restart_policy="OnFailure")
    param.mounts = [
        WorkerMount(url=MountURL(url=models[0], secret=_model_secret(job, refs, secrets, models[0]),
                                 download_by_initializer=True), env_name="BASE_MODEL_URL"),
        WorkerMount(url=MountURL(url=str(inp.get("outputDir") or ""), secret=job_secret), env_name="MODEL_URL"),
        WorkerMount(url=MountURL(url=str(inp.get("dataURL") or ""), secret=job_secret, download_by_initializer=True),
                    env_name="TRAIN_DATASET_URL"),
        original_dataset_mount(dataset, inp, secrets.of(dataset, f"dataset {meta.name(dataset)}")),
    ]
    return pod_from_template(job, (_spec(job).get("trainSpec") or {}).get("template"), param)


def eval_pod(job: Obj, data: Mapping[str, Any], refs: dict[str, dict[str, Any]], secrets: Secrets,
             lc_server: str) -> dict[str, Any]:
    inp = condition_input(data)
    dataset = refs["dataset"]
    dataset_secret = secrets.of(dataset, f"dataset {meta.name(dataset)}")
    param = WorkerParam(EVAL, env=_base_env(job, "eval-worker", lc_server), host_network=True,
                        restart_policy="OnFailure")
    models = [MountURL(url=url, secret=_model_secret(job, refs, secrets, url), download_by_initializer=True)
              for url in input_model_urls(data)]
    param.mounts = [
        WorkerMount(name="models", urls=models, env_name="MODEL_URLS"),
        WorkerMount(name="datasets", url=MountURL(url=str(inp.get("dataURL") or ""), secret=dataset_secret,
                                                  download_by_initializer=True), env_name="TEST_DATASET_URL"),
        original_dataset_mount(dataset, inp, dataset_secret, "origin-dataset"),
    ]
    return pod_from_template(job, (_spec(job).get("evalSpec") or {}).get("template"), param)


def inference_pod(job: Obj, spec: ILJobSpec, refs: dict[str, dict[str, Any]], secrets: Secrets,
                  lc_server: str) -> dict[str, Any]:
    deploy = _spec(job).get("deploySpec") or {}  # the template and HEM parameters are copied into the pod as they are
    hem = spec.deploy_spec.hard_example_mining if spec.deploy_spec is not None else None
    hot = spec.deploy_spec.model if spec.deploy_spec is not None else None
    model = refs["deployModel"]
    env = _base_env(job, "inferworker", lc_server)
    env.update(HEM_NAME=(hem.name or "") if hem is not None else "", HEM_PARAMETERS=hem_parameters(deploy))
    env["LC_SERVER"] = env.pop("LC_SERVER")  # Go's order of the variables
    update = ModelHotUpdate(enable=bool(hot is not None and hot.hot_update_enabled),
                            poll_period_seconds=(hot.poll_period_seconds or 0) if hot is not None else 0)
    param = WorkerParam(INFERENCE_WORKER, env=env, host_network=True, model_hot_update=update)
    param.mounts = [WorkerMount(name="model", url=MountURL(url=url_of(model), secret=secrets.of(
        model, f"model {meta.name(model)}"), download_by_initializer=True), env_name="MODEL_URL")]
    return pod_from_template(job, deploy.get("template"), param)
