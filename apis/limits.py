"""Bounds on decoded JSON/YAML documents, shared by every decoder that takes documents from outside.

A document nests at most ``MAX_DEPTH`` containers (objects/arrays) and holds only JSON values: string keys,
strings, booleans, null, finite numbers and integers in the int64/uint64 range (what a Go decoder can represent).
kube-apiserver's JSON decoder stops at 10,000 levels; ours stops much earlier, because every recursive step
downstream (deep copies through orjson, whose encoder stops at 254 levels, pruning, validation, patches) must
stay far from both that and Python's recursion limit. ``check_document`` walks iteratively, so it never recurses.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

__all__ = ["MAX_DEPTH", "DocumentLimitError", "check_document"]

MAX_DEPTH = 100
_INT_MIN, _INT_END = -(2**63), 2**64  # int64 and uint64 together, what orjson encodes


class DocumentLimitError(ValueError):
    """A decoded document is out of bounds (too deep, or a value JSON cannot carry); the message says which."""


def check_document(value: object, max_depth: int = MAX_DEPTH) -> None:
    """Raise ``DocumentLimitError`` when ``value`` nests more than ``max_depth`` containers or holds a value that is
    not JSON (a non-string key, an out-of-range integer, a non-finite float, bytes, a set …). Shared sub-documents
    (YAML aliases) are walked once."""
    stack: list[tuple[Any, int]] = []
    _check_scalar(value, stack, -1)  # a container is pushed at depth 0
    seen: set[int] = set()
    while stack:
        container, depth = stack.pop()
        if depth >= max_depth:
            raise DocumentLimitError(f"the document nests deeper than the maximum of {max_depth} levels")
        if id(container) in seen:
            continue
        seen.add(id(container))
        if isinstance(container, dict):
            children: Any = container.values()
            for key in container:
                if type(key) is not str:
                    raise DocumentLimitError(f"object keys must be strings, got {type(key).__name__} {str(key)[:40]!r}")
        else:
            children = container
        for child in children:
            kind = type(child)
            if kind is str or kind is bool or child is None:
                continue
            if kind is dict or kind is list or kind is tuple:
                stack.append((child, depth + 1))
            else:
                _check_scalar(child, stack, depth)


def _check_scalar(item: object, stack: list[tuple[Any, int]], depth: int) -> None:
    """Check a value that is not one of the common exact JSON types; a container (subclass) is pushed instead."""
    if isinstance(item, (dict, list, tuple)):  # subclasses
        stack.append((item, depth + 1))
    elif item is None or isinstance(item, (str, bool, date)):
        return
    elif isinstance(item, int):
        if not _INT_MIN <= item < _INT_END:
            raise DocumentLimitError(f"the number {str(item)[:40]} is out of the 64-bit integer range")
    elif isinstance(item, float):
        if not math.isfinite(item):
            raise DocumentLimitError(f"the number {item} is not finite")
    else:
        raise DocumentLimitError(f"unsupported value of type {type(item).__name__} in the document")
