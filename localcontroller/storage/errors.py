"""The one error every storage operation raises."""

from __future__ import annotations

__all__ = ["StorageError"]


class StorageError(Exception):
    """A storage operation failed on ``url`` (a storage URL, or a path of the LC's own filesystem).
    Never carries credential values."""

    def __init__(self, url: str, problem: str) -> None:
        super().__init__(f"{url or '<empty URL>'}: {problem}")
        self.url = url
        self.problem = problem
