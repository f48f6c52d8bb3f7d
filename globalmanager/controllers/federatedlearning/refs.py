"""The objects a FederatedLearningJob references: the aggregation Model, the optional pretrained Model, one Dataset
per training worker (on a node that must exist), and their Secrets and the s3 transmitter's.

``model_refs``/``dataset_refs`` name them (``Kind.references``: their events wake the job, through an index of the
jobs). An index function sees every job, so they name nothing for a spec the typed view rejects (instead of failing
the informer's index: that job is failed ``InvalidSpec`` by its sync). ``resolve_refs`` reads them for building the
pods (``MissingReference``: the job waits, phase ``Pending``)."""

from __future__ import annotations

from apis import meta
from apis.meta import Obj
from apis.resources import DATASETS, MODELS
from apis.sedna.v1alpha1 import FLJobSpec
from apis.typed import spec_of
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.references import get_credential, get_referenced

from .workers import Refs

__all__ = ["dataset_names", "dataset_refs", "model_names", "model_refs", "readable_spec", "resolve_refs"]


def readable_spec(job: Obj) -> FLJobSpec | None:
    """The typed spec, ``None`` when the view rejects it."""
    try:
        return spec_of(FLJobSpec, job)
    except ValueError:
        return None


def model_names(spec: FLJobSpec) -> tuple[str, str]:
    """The aggregation Model's name and the pretrained Model's (``""`` when none)."""
    agg = spec.aggregation_worker
    agg_model = agg.model.name if agg is not None and agg.model is not None else None
    pretrained = spec.pretrained_model.name if spec.pretrained_model is not None else None
    return agg_model or "", pretrained or ""


def dataset_names(spec: FLJobSpec) -> list[str]:
    """The Dataset of each training worker, in order."""
    return [(w.dataset.name if w.dataset is not None else None) or "" for w in spec.training_workers or []]


def model_refs(job: Obj) -> list[str]:
    spec = readable_spec(job)
    return [] if spec is None else list(model_names(spec))


def dataset_refs(job: Obj) -> list[str]:
    spec = readable_spec(job)
    return [] if spec is None else dataset_names(spec)


def resolve_refs(ctx: KindContext[None], job: Obj, spec: FLJobSpec) -> Refs:
    """Every object the job's pods are built from (Models and Datasets from the informer caches, Secrets from the API
    server); the Datasets' nodes are checked."""
    ns = meta.namespace(job)
    agg_model, pretrained_name = model_names(spec)

    def credential(obj: Obj, what: str) -> Obj | None:
        return get_credential(ctx.clientset, ns, str((obj.get("spec") or {}).get("credentialName") or ""), what)

    models = ctx.lister(MODELS)
    model = get_referenced(models, "Model", ns, agg_model, " (aggregation model)")
    pretrained = get_referenced(models, "Model", ns, pretrained_name, " (pretrained model)") if pretrained_name else None
    datasets: list[tuple[Obj, Obj | None]] = []
    for name in dataset_names(spec):
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
