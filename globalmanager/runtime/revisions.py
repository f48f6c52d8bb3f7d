"""Which version of its job an owned object was built from, recorded on the object itself.

* Generation: ``stamp_generation(obj, job)`` writes the job's ``metadata.generation`` into an annotation;
  ``is_current_generation(obj, job)`` compares. Kinds that replace their workers on a spec change (FL, ElasticDL)
  use it to tell outdated workers apart, even after a restart of the GM.
* Spec hash: ``stamp_spec_hash(obj, source)`` writes a hash of ``source`` (what the object is built from, e.g. the
  worker's part of the job spec); ``spec_hash_matches(obj, source)`` says whether it is still up to date. Kinds that
  update objects in place (JI's Deployments and HPAs) compare it instead of the object, which the API server
  defaults and which carries generated values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from apis import meta

__all__ = [
    "GENERATION_ANNOTATION",
    "SPEC_HASH_ANNOTATION",
    "is_current_generation",
    "spec_hash",
    "spec_hash_matches",
    "stamp_generation",
    "stamp_spec_hash",
]

GENERATION_ANNOTATION = "sedna.io/job-generation"
SPEC_HASH_ANNOTATION = "sedna.io/spec-hash"


def _annotate(obj: dict[str, Any], key: str, value: str) -> None:
    md = obj.setdefault("metadata", {})
    md["annotations"] = {**(md.get("annotations") or {}), key: value}


def stamp_generation(obj: dict[str, Any], job: Mapping[str, Any], annotation: str = GENERATION_ANNOTATION) -> None:
    _annotate(obj, annotation, str(meta.generation(job)))


def is_current_generation(
    obj: Mapping[str, Any], job: Mapping[str, Any], annotation: str = GENERATION_ANNOTATION
) -> bool:
    return meta.annotations(obj).get(annotation) == str(meta.generation(job))


def spec_hash(source: Any) -> str:
    return hashlib.sha256(orjson.dumps(source, option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]


def stamp_spec_hash(obj: dict[str, Any], source: Any) -> None:
    _annotate(obj, SPEC_HASH_ANNOTATION, spec_hash(source))


def spec_hash_matches(obj: Mapping[str, Any], source: Any) -> bool:
    return meta.annotations(obj).get(SPEC_HASH_ANNOTATION) == spec_hash(source)
