"""YAML loading that reads manifests the way kubectl (Go's sigs.k8s.io/yaml) does.

PyYAML follows YAML 1.1 and turns ``20:00`` into the base-60 integer 1200; Go's YAML library keeps it a string.
Sedna manifests write trigger windows as ``start: 20:00`` unquoted, so every manifest we load goes through here.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

__all__ = ["load", "load_all", "ManifestLoader"]


class ManifestLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without YAML 1.1's sexagesimal (base-60) integers and floats."""


_INT = re.compile(
    r"""^(?:[-+]?0b[0-1_]+
    |[-+]?0[0-7_]+
    |[-+]?(?:0|[1-9][0-9_]*)
    |[-+]?0x[0-9a-fA-F_]+)$""",
    re.X,
)
_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
    |\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)

ManifestLoader.yaml_implicit_resolvers = {
    first: [
        (tag, _INT if tag.endswith(":int") else _FLOAT if tag.endswith(":float") else regexp)
        for tag, regexp in resolvers
    ]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load(text: str | bytes) -> Any:
    """Parse one YAML document."""
    return yaml.load(text, Loader=ManifestLoader)  # noqa: S506 - ManifestLoader is a SafeLoader


def load_all(text: str | bytes) -> list[Any]:
    """Parse every document of a multi-document YAML stream (empty documents dropped)."""
    return [doc for doc in yaml.load_all(text, Loader=ManifestLoader) if doc is not None]  # noqa: S506
