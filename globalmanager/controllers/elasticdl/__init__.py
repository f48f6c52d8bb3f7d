"""The ElasticAIJob kind (ElasticDL operator): the master pod per job, status, self-healing."""

from .spec import ElasticAIJobSpec, SpecError, parse_spec

__all__ = ["ElasticAIJobSpec", "SpecError", "parse_spec"]
