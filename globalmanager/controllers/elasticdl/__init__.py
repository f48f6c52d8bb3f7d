"""The ElasticAIJob controller (ElasticDL operator): the master pod per job, status, self-healing."""

from .spec import ElasticAIJobSpec, SpecError, parse_spec

__all__ = ["ElasticAIJobController", "ElasticAIJobSpec", "SpecError", "parse_spec"]


def __getattr__(name: str) -> object:
    if name == "ElasticAIJobController":
        from .controller import ElasticAIJobController

        return ElasticAIJobController
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
