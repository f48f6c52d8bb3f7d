"""The pod simulator's timers: when each work item is next due, at most one due time per item.

Scheduling an item that is already due earlier changes nothing; an earlier time replaces the later one. Replaced
and cancelled times leave stale heap entries that are skipped when they surface, and the heap is rebuilt once they
outnumber the live ones, so memory stays bounded by the number of items with a timer (pods deleted while waiting
included). Not thread-safe: the simulator's lock guards it.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["Timers"]

_Item = TypeVar("_Item", bound=Hashable)


class Timers(Generic[_Item]):
    """Due times (monotonic seconds) of hashable work items; see the module doc."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Item]] = []
        self._due: dict[_Item, float] = {}
        self._seq = itertools.count()

    def schedule(self, item: _Item, due: float) -> bool:
        """Make ``item`` due at ``due`` unless it is due earlier already; True when its due time changed."""
        current = self._due.get(item)
        if current is not None and current <= due:
            return False
        self._due[item] = due
        heapq.heappush(self._heap, (due, next(self._seq), item))
        self._compact()
        return True

    def cancel(self, item: _Item) -> None:
        """Forget ``item``'s timer (if any)."""
        if self._due.pop(item, None) is not None:
            self._compact()

    def next_due(self) -> float | None:
        """The earliest due time, None without timers."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, horizon: float) -> list[_Item]:
        """The items due at ``horizon`` or before (their timers are consumed), earliest first."""
        items: list[_Item] = []
        while self._heap and self._heap[0][0] <= horizon:
            due, _, item = heapq.heappop(self._heap)
            if self._due.get(item) == due:
                del self._due[item]
                items.append(item)
        return items

    def __len__(self) -> int:
        return len(self._due)

    @property
    def heap_size(self) -> int:
        """Heap entries, stale ones included (at most about twice ``len``)."""
        return len(self._heap)

    def _drop_stale(self) -> None:
        while self._heap and self._due.get(self._heap[0][2]) != self._heap[0][0]:
            heapq.heappop(self._heap)

    def _compact(self) -> None:
        if len(self._heap) > 2 * len(self._due) + 64:
            self._heap = [(due, next(self._seq), item) for item, due in self._due.items()]
            heapq.heapify(self._heap)
