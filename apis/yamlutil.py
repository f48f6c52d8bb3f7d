"""YAML loading that reads manifests the way kubectl (Go's sigs.k8s.io/yaml) does, within bounds.

PyYAML follows YAML 1.1 and turns ``20:00`` into the base-60 integer 1200; Go's YAML library keeps it a string.
Sedna manifests write trigger windows as ``start: 20:00`` unquoted, so every manifest we load goes through here.

Every document is bounded while it is composed, before anything is built from it (``YAMLLimitError``, a
``yaml.YAMLError``):

- it nests at most ``apis.limits.MAX_DEPTH`` collections, aliases expanded;
- expanded, it is at most ``MAX_EXPANDED_BYTES`` (about its size as JSON): a "billion laughs" document of a few
  hundred bytes is refused without being expanded;
- go-yaml's alias rule (what kube-apiserver and kubectl apply): once more than 100 of more than 1,000 decoded
  nodes come from aliases, at most 99 % (down to 10 % for documents of 4 million nodes) may;
- an alias may not refer to the collection that contains it.

Mapping keys that are not strings become strings as sigs.k8s.io/yaml converts them (``1`` → ``"1"``,
``true`` → ``"true"``, ``null`` → ``"null"``). What the loader returns still passes ``apis.limits.check_document``'s
other rules only when the caller checks it (``!!binary``, ``!!set``, ``.inf`` are YAML, not JSON).
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from typing import Any

import yaml

from .limits import MAX_DEPTH

__all__ = ["MAX_EXPANDED_BYTES", "ManifestLoader", "YAMLLimitError", "load", "load_all"]

MAX_EXPANDED_BYTES = 3 * 1024 * 1024  # kube-apiserver's request body limit
# go-yaml's excessive-aliasing rule (decode.go allowedAliasRatio)
_ALIAS_RATIO_LOW, _ALIAS_RATIO_HIGH = 400_000, 4_000_000


class YAMLLimitError(yaml.YAMLError):
    """A YAML document exceeds a bound (depth, expanded size, aliasing); the message says which."""


def _allowed_alias_ratio(decoded: int) -> float:
    if decoded <= _ALIAS_RATIO_LOW:
        return 0.99
    if decoded >= _ALIAS_RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _ALIAS_RATIO_LOW) / (_ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW)


class _Expansion:
    """What one composed node amounts to once its aliases are expanded."""

    __slots__ = ("size", "nodes", "height")

    def __init__(self, size: int, nodes: int, height: int) -> None:
        self.size, self.nodes, self.height = size, nodes, height


class ManifestLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without YAML 1.1's sexagesimal numbers, with the bounds of the module doc."""

    max_depth = MAX_DEPTH
    max_expanded_bytes = MAX_EXPANDED_BYTES

    def compose_document(self) -> Any:
        self._expansions: dict[int, _Expansion] = {}  # id(node) → expansion; nodes live as long as the document
        self._open_anchors: set[str] = set()
        self._depth = 0
        self._decoded = 0
        self._alias_decoded = 0
        try:
            return super().compose_document()
        finally:
            self._expansions = {}

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:  # index: int or key node
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise YAMLLimitError(f"yaml: anchor {event.anchor!r} value contains itself ({event.start_mark})")
            node = super().compose_node(parent, index)
            expansion = self._expansions[id(node)]
            self._count(expansion.nodes, aliased=True)
            self._check(expansion, self._depth + expansion.height)
            return node
        collection = isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent))
        anchor = event.anchor if collection else None
        if collection:
            self._depth += 1
            if self._depth > self.max_depth:
                raise YAMLLimitError(f"yaml: the document nests deeper than {self.max_depth} levels ({event.start_mark})")
            if anchor is not None:
                self._open_anchors.add(anchor)
        try:
            node = super().compose_node(parent, index)
        finally:
            if collection:
                self._depth -= 1
                if anchor is not None:
                    self._open_anchors.discard(anchor)
        if node is None:  # PyYAML's contract allows it; never for the events that start a node
            return None
        self._count(1, aliased=False)
        expansion = self._expand(node)
        self._expansions[id(node)] = expansion
        self._check(expansion, self._depth + expansion.height)
        return node

    def _expand(self, node: yaml.Node) -> _Expansion:
        if isinstance(node, yaml.ScalarNode):
            return _Expansion(len(node.value) + 3, 1, 0)  # quotes and a separator, as JSON would write it
        if isinstance(node, yaml.SequenceNode):
            children = [self._expansions[id(child)] for child in node.value]
        else:
            children = [self._expansions[id(part)] for pair in node.value for part in pair]
        return _Expansion(
            2 + sum(c.size for c in children),
            1 + sum(c.nodes for c in children),
            1 + max((c.height for c in children), default=0),
        )

    def _count(self, nodes: int, aliased: bool) -> None:
        self._decoded += nodes
        if aliased:
            self._alias_decoded += nodes
        if (
            self._alias_decoded > 100
            and self._decoded > 1000
            and self._alias_decoded / self._decoded > _allowed_alias_ratio(self._decoded)
        ):
            raise YAMLLimitError("yaml: document contains excessive aliasing")

    def _check(self, expansion: _Expansion, depth: int) -> None:
        if expansion.size > self.max_expanded_bytes:
            raise YAMLLimitError(
                f"yaml: the document expands to more than {self.max_expanded_bytes} bytes (aliases expanded)"
            )
        if depth > self.max_depth:
            raise YAMLLimitError(f"yaml: the document nests deeper than {self.max_depth} levels (aliases expanded)")

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """SafeConstructor's, with keys converted before they collide (``1`` and ``true`` are equal in Python)."""
        if not isinstance(node, yaml.MappingNode):
            return super().construct_mapping(node, deep=deep)  # raises the ConstructorError
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _key_string(self.construct_object(key_node, deep=deep))
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _key_string(key: object) -> object:
    """sigs.k8s.io/yaml's conversion of a non-string mapping key (anything else stays and fails JSON checks)."""
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    if isinstance(key, (int, float)):
        return str(key)
    return key


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
    """Parse one YAML document (bounded: ``YAMLLimitError``)."""
    return yaml.load(text, Loader=ManifestLoader)  # noqa: S506 - ManifestLoader is a SafeLoader


def load_all(text: str | bytes) -> list[Any]:
    """Parse every document of a multi-document YAML stream (empty documents dropped; each one bounded)."""
    return [doc for doc in yaml.load_all(text, Loader=ManifestLoader) if doc is not None]  # noqa: S506
