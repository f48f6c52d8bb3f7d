"""Hostile request bodies for robustness tests (issue 11): YAML alias bombs, deep nesting, JSON patch bombs."""

from __future__ import annotations

from typing import Any

__all__ = ["billion_laughs", "copy_bomb", "nested_json", "nested_yaml"]


def billion_laughs(levels: int = 9, key: str = "a") -> str:
    """YAML mapping lines ``<key>0`` … ``<key>{levels-1}``, each 9 aliases of the previous: 9**levels strings once
    expanded, in a few hundred bytes (9 levels: ~340 bytes, 387 million strings)."""
    lines = [f'{key}0: &{key}0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"{key}{i}: &{key}{i} [" + ",".join([f"*{key}{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def nested_json(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_yaml(depth: int) -> str:
    return "[" * depth + "]" * depth  # flow style: YAML and JSON at once


def copy_bomb(operations: int = 30, source: str = "/spec") -> list[dict[str, Any]]:
    """A JSON patch copying ``source`` into itself ``operations`` times (doubling it each time)."""
    return [{"op": "copy", "from": source, "path": f"{source}/copy{i}"} for i in range(operations)]
