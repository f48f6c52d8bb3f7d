"""The objects a FederatedLearningJob references: the aggregation Model, the optional pretrained Model, one Dataset
per training worker (on a node that must exist), and their Secrets and the s3 transmitter's.

``model_refs``/``dataset_refs`` name them (``Kind.references``: their events wake the job, through an index of the
jobs); they read the object as it is, as every index function sees every job, one its typed view rejects too.
``resolve_refs`` reads them for building the pods (``MissingReference``: the job waits, phase ``Pending``)."""

from __future__ import annotations

from apis import meta
from apis.meta import Obj
from apis.resources import DATASETS, MODELS
from apis.sedna.v1alpha1 import FLJobSpec
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.references import get_credential, get_referenced

from .workers import Refs

__all__ = ["dataset_refs", "model_refs", "resolve_refs"]


def model_refs(job: Obj) -> list[str]:
    """The aggregation Model's name, then the pretrained Model's (``""`` when none)."""
    spec = job.get("spec") or {}
    return [
        str(((spec.get("aggregationWorker") or {}).get("model") or {}).get("name") or ""),
        str((spec.get("pretrainedModel") or {}).get("name") or ""),
    ]


def dataset_refs(job: Obj) -> list[str]:
    """The Dataset of each training worker, in order."""
    return [str(((w or {}).get("dataset") or {}).get("name") or "")
            for w in (job.get("spec") or {}).get("trainingWorkers") or []]


def resolve_refs(ctx: KindContext[None], job: Obj, spec: FLJobSpec) -> Refs:
    """Every object the job's pods are built from (Models and Datasets from the informer caches, Secrets from the API
    server); the Datasets' nodes are checked."""
    ns = meta.namespace(job)
    agg_model, pretrained_name = model_refs(job)

    def credential(obj: Obj, what: str) -> Obj | None:
        return get_credential(ctx.clientset, ns, str((obj.get("spec") or {}).get("credentialName") or ""), what)

    models = ctx.lister(MODELS)
    model = get_referenced(models, "Model", ns, agg_model, " (aggregation model)")
    pretrained = get_referenced(models, "Model", ns, pretrained_name, " (pretrained model)") if pretrained_name else None
    datasets: list[tuple[Obj, Obj | None]] = []
    for name in dataset_refs(job):
        dataset = get_referenced(ctx.lister(DATASETS), "Dataset", ns, name)
        if ctx.nodes is not None:
            ctx.nodes.check(job, dataset)
        datasets.append((dataset, credential(dataset, f"dataset {name}")))
    s3 = spec.transmitter.s3 if spec.transmitter is not None else None
    transmitter_credential = (s3.credential_name if s3 is not None else None) or ""
    return Refs(
        model=model,
        model_secret=credential(model, f"model {agg_model}"),
        pretrained=pretrained,
        pretrained_secret=credential(pretrained, f"model {pretrained_name}") if pretrained is not None else None,
        transmitter_secret=get_credential(ctx.clientset, ns, transmitter_credential, "the s3 transmitter"),
        datasets=datasets,
    )
