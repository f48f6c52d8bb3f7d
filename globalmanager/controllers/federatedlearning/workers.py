"""The pods of a FederatedLearningJob as Sedna's GM builds them (``createAggPod`` / ``createTrainPod``).

* Aggregation (worker type ``Aggregation``, ``restartPolicy: OnFailure`` unless the template sets one): env
  ``NAMESPACE``, ``WORKER_NAME=aggworker-<5 random>``, ``JOB_NAME``, ``AGG_BIND_PORT=7363``, ``PARTICIPANTS_COUNT``,
  ``TRANSMITTER`` (``s3``: the mount ``AGG_DATA_PATH`` with the transmitter's credentials, not downloaded; else
  ``ws``); mounts ``MODEL_URL`` and ``PRETRAINED_MODEL_URL`` (downloaded by the storage initializer).
* Training, one per ``spec.trainingWorkers[i]`` (worker type ``train``, ``hostNetwork``, ``OnFailure``): mounts
  ``MODEL_URL``, ``PRETRAINED_MODEL_URL``, ``TRAIN_DATASET_URL`` (downloaded), env ``AGG_PORT=7363``,
  ``AGG_IP=<job>-aggregation.<namespace>``, ``WORKER_NAME=trainworker-<5 random>``, ``JOB_NAME``,
  ``PARTICIPANTS_COUNT``, ``NAMESPACE``, ``MODEL_NAME``, ``DATASET_NAME``, ``LC_SERVER``, ``TRANSMITTER``.
Every pod also records the job generation it was built from (``revisions.stamp_generation``), and a training pod
which training worker it is (``sedna.io/training-worker-index``): ``worker_slot`` names the worker a pod is
(``aggregation``, ``train-<i>``) and ``missing_workers`` those of a job that have no pod. The pods are built from
the job's typed spec (``FLJobSpec``); its templates are the job's own dicts, copied into each pod.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from apis import meta
from apis.meta import Obj
from apis.sedna.v1alpha1 import FLJobSpec
from globalmanager.runtime.labels import label_prefix
from globalmanager.runtime.names import rand_string
from globalmanager.runtime.pods import pod_from_template
from globalmanager.runtime.revisions import stamp_generation
from globalmanager.runtime.services import edge_mesh_service_host
from globalmanager.runtime.storage import MountURL, WorkerMount
from globalmanager.runtime.worker import TRAIN_WORKER, WorkerParam

__all__ = [
    "AGG_PORT",
    "AGGREGATION",
    "AGGREGATION_SLOT",
    "INDEX_ANNOTATION",
    "Refs",
    "aggregation_pod",
    "missing_workers",
    "participants",
    "training_pod",
    "training_slot",
    "worker_slot",
]

AGGREGATION = "Aggregation"
AGG_PORT = 7363
INDEX_ANNOTATION = "sedna.io/training-worker-index"
AGGREGATION_SLOT = AGGREGATION.lower()


@dataclass
class Refs:
    """The objects a job's pods are built from (resolved by the controller; secrets may be ``None``)."""

    model: Obj
    model_secret: Obj | None
    pretrained: Obj | None
    pretrained_secret: Obj | None
    transmitter_secret: Obj | None
    datasets: list[tuple[Obj, Obj | None]]  # per training worker: (dataset, its secret)


def _mount(env_name: str, obj: Obj, secret: Obj | None, download: bool = True) -> WorkerMount:
    url = str((obj.get("spec") or {}).get("url") or "")
    return WorkerMount(url=MountURL(url=url, secret=secret, download_by_initializer=download), env_name=env_name)


def _transmitter(spec: FLJobSpec, refs: Refs, param: WorkerParam) -> None:
    s3 = spec.transmitter.s3 if spec.transmitter is not None else None
    if s3 is not None and s3.to_dict():  # an empty ``s3: {}`` is no transmitter, as before the typed spec
        param.env["TRANSMITTER"] = "s3"
        url = s3.agg_data_path or ""
        param.mounts.append(WorkerMount(url=MountURL(url=url, secret=refs.transmitter_secret), env_name="AGG_DATA_PATH"))
    else:
        param.env["TRANSMITTER"] = "ws"


def _model_mounts(refs: Refs) -> list[WorkerMount]:
    mounts = [_mount("MODEL_URL", refs.model, refs.model_secret)]
    if refs.pretrained is not None:
        mounts.append(_mount("PRETRAINED_MODEL_URL", refs.pretrained, refs.pretrained_secret))
    return mounts


def participants(spec: FLJobSpec) -> int:
    """How many training workers the job has (``PARTICIPANTS_COUNT``)."""
    return len(spec.training_workers or [])


def training_slot(index: int) -> str:
    return f"{TRAIN_WORKER}-{index}"


def worker_slot(job: Obj, pod: Obj) -> str | None:
    """The worker of ``job`` that ``pod`` is; ``None`` for a training pod that does not record its index."""
    if meta.labels(pod).get(label_prefix(job) + "worker-type") == AGGREGATION_SLOT:
        return AGGREGATION_SLOT
    index = meta.annotations(pod).get(INDEX_ANNOTATION, "")
    return training_slot(int(index)) if index.isdigit() else None


def missing_workers(job: Obj, trainers: int, pods: Iterable[Obj], finished: Collection[str] = ()) -> list[str]:
    """The workers of ``job`` (aggregation first, then its ``trainers`` training workers in order) that none of
    ``pods`` is, leaving out those in ``finished``."""
    present = [worker_slot(job, p) for p in pods]
    wanted = [AGGREGATION_SLOT, *(training_slot(i) for i in range(trainers))]
    missing = [slot for slot in wanted if slot not in present and slot not in finished]
    # training pods created before pods recorded their index (an older sedna-gm) stand for the first free workers
    unindexed = present.count(None)
    out = []
    for slot in missing:
        if slot != AGGREGATION_SLOT and unindexed:
            unindexed -= 1
            continue
        out.append(slot)
    return out


def aggregation_pod(job: Obj, spec: FLJobSpec, refs: Refs) -> dict[str, Any]:
    param = WorkerParam(AGGREGATION, restart_policy="OnFailure", env={
        "NAMESPACE": meta.namespace(job),
        "WORKER_NAME": f"aggworker-{rand_string(5)}",
        "JOB_NAME": meta.name(job),
        "AGG_BIND_PORT": str(AGG_PORT),
        "PARTICIPANTS_COUNT": str(participants(spec)),
    })
    _transmitter(spec, refs, param)
    param.mounts += _model_mounts(refs)
    template = spec.aggregation_worker.template if spec.aggregation_worker is not None else None
    pod = pod_from_template(job, template, param)
    stamp_generation(pod, job)
    return pod


def training_pod(job: Obj, spec: FLJobSpec, index: int, refs: Refs, lc_server: str) -> dict[str, Any]:
    worker = (spec.training_workers or [])[index]
    dataset, dataset_secret = refs.datasets[index]
    param = WorkerParam(TRAIN_WORKER, host_network=True, restart_policy="OnFailure", mounts=_model_mounts(refs))
    param.mounts.append(_mount("TRAIN_DATASET_URL", dataset, dataset_secret))
    param.env = {
        "AGG_PORT": str(AGG_PORT),
        "AGG_IP": edge_mesh_service_host(job, AGGREGATION),
        "WORKER_NAME": f"trainworker-{rand_string(5)}",
        "JOB_NAME": meta.name(job),
        "PARTICIPANTS_COUNT": str(participants(spec)),
        "NAMESPACE": meta.namespace(job),
        "MODEL_NAME": meta.name(refs.model),
        "DATASET_NAME": meta.name(dataset),
        "LC_SERVER": lc_server,
    }
    _transmitter(spec, refs, param)
    pod = pod_from_template(job, worker.template, param)
    pod["metadata"]["annotations"] = {**(pod["metadata"].get("annotations") or {}), INDEX_ANNOTATION: str(index)}
    stamp_generation(pod, job)
    return pod
