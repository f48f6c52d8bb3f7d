"""The pods of a LifelongLearningJob as Sedna's GM builds them (``createPod`` / ``createInferPod``). Every pod:
``hostNetwork``, ``dnsPolicy: ClusterFirstWithHostNet``; Train and Eval ``OnFailure``.

* Train (worker type ``Train``): env ``NAMESPACE``, ``JOB_NAME``, ``WORKER_NAME=train-worker-<5 random>``,
  ``HAS_COMPLETED_INITIAL_TRAINING`` (``true`` once any Train/Completed condition exists), ``LC_SERVER``,
  ``KB_SERVER``, and then ``CLOUD_KB_INDEX`` (the URL of ``output.models[0]`` of the newest Train/Completed that has
  one); mounts ``OUTPUT_URL`` = ``input.outputDir`` (the job's Secret, not downloaded), ``TRAIN_DATASET_URL`` =
  ``input.dataURL`` (the job's Secret, downloaded), ``ORIGINAL_DATASET_URL`` (the Dataset's Secret).
* Eval (worker type ``Eval``): env ``NAMESPACE``, ``JOB_NAME``, ``WORKER_NAME=eval-worker-<5 random>``,
  ``LC_SERVER``, ``KB_SERVER``; mounts ``MODEL_URLS`` (every input model, the job's Secret), ``OUTPUT_URL``,
  ``TEST_DATASET_URL`` (the Dataset's Secret), ``ORIGINAL_DATASET_URL``.
* Inference (worker type ``inference``): mount ``MODEL_URLS`` = ``<outputDir>/deploy/index.pkl`` (the job's Secret,
  not downloaded); env ``NAMESPACE``, ``JOB_NAME``, ``WORKER_NAME=inferworker-<5 random>``, ``LC_SERVER``,
  ``OUTPUT_URL=<outputDir>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.sedna.constants import COMPLETED, EVAL, TRAIN
from apis.sedna.v1alpha1 import LLJobSpec
from globalmanager.controllers.learningjob.conditions import (
    condition_data,
    condition_input,
    input_model_urls,
    output_models,
)
from globalmanager.controllers.learningjob.workers import Secrets, original_dataset_mount
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.pods import pod_from_template
from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import INFERENCE_WORKER, WorkerParam

__all__ = ["cloud_kb_index", "eval_pod", "has_completed_initial_training", "inference_pod", "train_pod"]

DNS_POLICY = "ClusterFirstWithHostNet"


def _conditions(job: Obj) -> list[Mapping[str, Any]]:
    return (job.get("status") or {}).get("conditions") or []


def has_completed_initial_training(job: Obj) -> bool:
    return any(c.get("stage") == TRAIN and c.get("type") == COMPLETED for c in _conditions(job))


def cloud_kb_index(job: Obj) -> str:
    for cond in reversed(_conditions(job)):
        if cond.get("stage") == TRAIN and cond.get("type") == COMPLETED:
            models = output_models(condition_data(cond))
            if models:
                return str(models[0].get("url") or "")
    return ""


def _param(job: Obj, worker_type: str, worker: str, lc_server: str, restart: str = "OnFailure") -> WorkerParam:
    env = {"NAMESPACE": meta.namespace(job), "JOB_NAME": meta.name(job), "WORKER_NAME": f"{worker}-{rand_string(5)}"}
    return WorkerParam(worker_type, env=env, host_network=True, restart_policy=restart, dns_policy=DNS_POLICY)


def _job_secret(job: Obj, secrets: Secrets) -> Obj | None:
    return secrets.of(job, f"lifelonglearning job {meta.name(job)}")


def _output_mount(inp: Mapping[str, Any], secret: Obj | None) -> WorkerMount:
    return WorkerMount(url=MountURL(url=str(inp.get("outputDir") or ""), secret=secret), env_name="OUTPUT_URL")


def train_pod(job: Obj, refs: dict[str, dict[str, Any]], secrets: Secrets, lc_server: str,
              kb_server: str) -> dict[str, Any]:
    data = condition_data(_conditions(job)[-1])
    inp = condition_input(data)
    dataset, job_secret = refs["dataset"], _job_secret(job, secrets)
    param = _param(job, TRAIN, "train-worker", lc_server)
    initial_done = has_completed_initial_training(job)
    param.env.update(HAS_COMPLETED_INITIAL_TRAINING="true" if initial_done else "false", LC_SERVER=lc_server,
                     KB_SERVER=kb_server)
    if initial_done:
        param.env["CLOUD_KB_INDEX"] = cloud_kb_index(job)
    param.mounts = [
        _output_mount(inp, job_secret),
        WorkerMount(url=MountURL(url=str(inp.get("dataURL") or ""), secret=job_secret, download_by_initializer=True),
                    env_name="TRAIN_DATASET_URL"),
        original_dataset_mount(dataset, inp, secrets.of(dataset, f"dataset {meta.name(dataset)}")),
    ]
    return pod_from_template(job, ((job.get("spec") or {}).get("trainSpec") or {}).get("template"), param)


def eval_pod(job: Obj, refs: dict[str, dict[str, Any]], secrets: Secrets, lc_server: str,
             kb_server: str) -> dict[str, Any]:
    data = condition_data(_conditions(job)[-1])
    inp = condition_input(data)
    dataset, job_secret = refs["dataset"], _job_secret(job, secrets)
    dataset_secret = secrets.of(dataset, f"dataset {meta.name(dataset)}")
    param = _param(job, EVAL, "eval-worker", lc_server)
    param.env.update(LC_SERVER=lc_server, KB_SERVER=kb_server)
    param.mounts = [
        WorkerMount(name="models", urls=[MountURL(url=url, secret=job_secret, download_by_initializer=True)
                                         for url in input_model_urls(data)], env_name="MODEL_URLS"),
        _output_mount(inp, job_secret),
        WorkerMount(name="datasets", url=MountURL(url=str(inp.get("dataURL") or ""), secret=dataset_secret,
                                                  download_by_initializer=True), env_name="TEST_DATASET_URL"),
        original_dataset_mount(dataset, inp, dataset_secret, "origin-dataset"),
    ]
    return pod_from_template(job, ((job.get("spec") or {}).get("evalSpec") or {}).get("template"), param)


def inference_pod(job: Obj, spec: LLJobSpec, secrets: Secrets, lc_server: str) -> dict[str, Any]:
    output_dir = spec.output_dir or ""
    param = _param(job, INFERENCE_WORKER, "inferworker", lc_server, restart="")
    param.env.update(LC_SERVER=lc_server, OUTPUT_URL=output_dir)
    url = MountURL(url=output_dir.rstrip("/") + "/deploy/index.pkl", secret=_job_secret(job, secrets))
    param.mounts = [WorkerMount(name="models", url=url, env_name="MODEL_URLS")]
    return pod_from_template(job, ((job.get("spec") or {}).get("deploySpec") or {}).get("template"), param)
