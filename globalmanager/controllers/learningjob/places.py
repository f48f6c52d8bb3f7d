"""Where the paths of an LC's ``Ready`` input may point before the GM mounts them into a worker (issue 38).

The Train and Eval pods are built from the last condition's ``data.input`` (``models[].url``/``model.url``,
``dataURL``, ``dataIndexURL``, ``outputDir``), which the job's resident node reported, while the pod runs on another
node: a host path there becomes a ``hostPath`` volume (its directory), an S3 URL a download with the job's or the
Dataset's credentials. So every URL of the input must lie inside the job's places (``apis.sedna.places``): below
``spec.outputDir`` or the directory of one of the job's Models' URLs (IL: ``initialModel``, ``deploySpec.model``,
``evalSpec.initialEvalModel``; LL has none), judged lexically after ``normpath`` (the GM sees no node's filesystem),
S3 URLs in such a place's bucket and below its key prefix. Our LC and Go's LC report only such paths: the round's data
files under ``<outputDir>/data/{train,eval}/<round>/``, ``outputDir`` = ``<outputDir>/{train,eval}/<round>``, the
Models' URLs and the trained model the train worker wrote under ``outputDir``.

Otherwise ``PathOutsideJob``: the GM creates no pod, and the stage is ``Failed`` with ``reason: PathOutsideJob`` and a
message naming the field, the path and the rule, with a Warning Event (``controller``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from apis.meta import Obj
from apis.sedna.places import PATH_OUTSIDE_JOB, DeclaredPlaces

from .conditions import input_model_urls
from .workers import url_of

__all__ = ["PATH_OUTSIDE_JOB", "RULE", "PathOutsideJob", "confine_input"]

RULE = ("the GM mounts a path an LC reports only inside the job's output directory and its Models' directories "
        "(judged after normalising the path: the GM does not see the node's filesystem)")
_INPUT_PATHS = ("dataURL", "dataIndexURL", "outputDir")


class PathOutsideJob(Exception):
    """A path of the stage's input lies outside the job's places: the stage fails and no pod is created."""

    reason = PATH_OUTSIDE_JOB


def _input_urls(data: Mapping[str, Any], inp: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, URL) of every URL of ``data.input``."""
    single = isinstance(inp.get("model"), Mapping)  # Go reads ``model`` when set, else ``models``
    for i, url in enumerate(input_model_urls(data)):
        yield "input.model.url" if single else f"input.models[{i}].url", url
    for name in _INPUT_PATHS:
        yield f"input.{name}", str(inp.get(name) or "")


def confine_input(job: Obj, stage: str, data: Mapping[str, Any], refs: Mapping[str, Obj]) -> None:
    """Raise ``PathOutsideJob`` naming the first URL of ``data.input`` outside the places of ``job``, whose Models
    are the ``refs`` other than its ``dataset``. An input that is missing is left to the pod's builder
    (``InvalidConditionData``)."""
    inp = data.get("input")
    if not isinstance(inp, Mapping):
        return
    output_dir = str((job.get("spec") or {}).get("outputDir") or "")
    places = DeclaredPlaces.of(output_dir, [url_of(ref) for role, ref in refs.items() if role != "dataset"])
    for field, url in _input_urls(data, inp):
        if not url:
            continue
        problem = places.problem(url)
        if problem:
            raise PathOutsideJob(f"{stage}/Ready {field}: {problem}; {RULE}; no {stage.lower()} pod was created")
