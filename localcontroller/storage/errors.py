"""The one error every storage operation raises."""

from __future__ import annotations

__all__ = ["StorageError"]


class StorageError(Exception):
    """A storage operation failed on ``url`` (a storage URL, or a path of the LC's own filesystem).
    Never carries credential values. ``missing``: the file or object (or its bucket) does not exist; ``changed``: it
    was replaced while being read (a conditional read failed)."""

    def __init__(self, url: str, problem: str, *, missing: bool = False, changed: bool = False) -> None:
        super().__init__(f"{url or '<empty URL>'}: {problem}")
        self.url = url
        self.problem = problem
        self.missing = missing
        self.changed = changed
