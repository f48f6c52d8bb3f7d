"""``Result``: what a ``sync(key)`` asks of the runner once it returned (controller-runtime's ``reconcile.Result``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Result"]


@dataclass(frozen=True)
class Result:
    """The outcome of a sync that did not raise. ``Result()`` (or ``None``): done; the key's rate-limit history is
    forgotten and it is synced again only when something enqueues it.

    * ``requeue_after``: sync the key again after this many seconds (history forgotten: a planned wake-up, not a
      failure). Wins over ``requeue``.
    * ``requeue``: sync again after the key's rate-limited delay (history kept, so the waits grow: a wait that no
      event ends, e.g. a missing Secret), as Go's ``AddRateLimited``.
    * ``forget=False``: keep the key's rate-limit history without requeueing it (Go Sedna's ``sync`` returning
      ``forget=false``): its next non-immediate enqueue still backs off.
    """

    requeue_after: float | None = None
    requeue: bool = False
    forget: bool = True

    def __post_init__(self) -> None:
        if self.requeue_after is not None and self.requeue_after < 0:
            raise ValueError(f"requeue_after must be >= 0, got {self.requeue_after}")
