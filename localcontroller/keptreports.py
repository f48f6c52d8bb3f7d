"""The bounds of the worker reports an LC keeps for jobs it does not hold yet (``lc_pending``), chosen so that no client
can make another worker's report be lost: reports for jobs that do not exist neither refuse nor push out the reports
of other clients while those wait for their job.

Words: a kept report's *owner* is its job (``ownerKind``, namespace, ``ownerName``); its *source* is who posted it
(the client address and the worker name in the path). An owner is *sent* when the GM has sent this node that job
before (and taken it off since); otherwise it is *unsent*: a job the GM is still to send (its worker reported first),
or one that does not exist.

* **Per owner and per source** at most ``max_reports_per_owner`` reports and ``max_bytes_per_owner`` bytes (the same
  per source): past it that owner's (that source's) next report is refused (503), nobody else's.
* **Node-wide** ``max_reports`` and ``max_bytes``. A report that would pass them first makes room by dropping the
  reports kept for unsent owners: those of the client address that keeps the most of them, its oldest owner first;
  never the report's own owner's, never a sent owner's. Only when nothing can be dropped is it refused (503). A client
  that floods reports for made-up jobs so pays with its own reports; one that shares its address with the workers
  (host network) can still push theirs out, but only by sending more than ``max_reports`` reports before their job
  arrives, and only from sources under their own bounds (many worker names).
* **Age** A sent owner's reports are dropped ``max_age`` after they arrived. An unsent owner's are dropped once the LC
  has been connected to the GM for ``unsent_max_age`` seconds since they arrived (the GM sends a node its jobs when
  it connects: a job it has not sent in that time is not coming), and after ``max_age`` at the latest.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .server import ReportRefused
from .store import KeptReport

__all__ = ["NewReport", "PendingLimits", "expired", "make_room"]

MIB = 1024 * 1024


@dataclass(frozen=True)
class PendingLimits:
    """Bounds of the reports kept for jobs this node does not hold yet."""

    max_reports: int = 1000
    max_bytes: int = 64 * MIB
    max_reports_per_owner: int = 100
    max_bytes_per_owner: int = 16 * MIB
    max_reports_per_source: int = 100
    max_bytes_per_source: int = 16 * MIB
    max_age: float = 3600.0  # seconds
    unsent_max_age: float = 300.0  # seconds connected to the GM
    retry_after: int = 5  # seconds, the Retry-After of a 503


@dataclass(frozen=True)
class NewReport:
    """A report to keep: its owner, its source, its size and whether its owner is sent."""

    owner: tuple[str, str, str]  # (ownerKind, namespace, ownerName)
    client: str
    worker: str
    size: int
    sent: bool


def expired(kept: Iterable[KeptReport], now: float, connected_since: float | None,
            limits: PendingLimits) -> list[KeptReport]:
    """The kept reports past their age: ``connected_since`` is when the LC last connected to the GM (``None`` while
    it is not connected: an unsent owner's reports then wait for ``max_age``)."""
    out = []
    for report in kept:
        if now - report.received > limits.max_age:
            out.append(report)
        elif (not report.sent and connected_since is not None
              and now - max(report.received, connected_since) > limits.unsent_max_age):
            out.append(report)
    return out


def make_room(kept: Sequence[KeptReport], new: NewReport, limits: PendingLimits) -> list[KeptReport]:
    """The kept reports to drop so that ``new`` fits (often none); raises ``ReportRefused`` with the bound and what
    holds it when ``new`` cannot be kept."""
    alone = min(limits.max_bytes, limits.max_bytes_per_owner, limits.max_bytes_per_source)
    if new.size > alone:
        _refuse(f"the report's {new.size} bytes are over the {alone} bytes a report kept for a job this node does "
                "not hold yet may take", limits)
    namespace, name = new.owner[1], new.owner[2]
    _check_share([k for k in kept if k.owner == new.owner], new.size, limits.max_reports_per_owner,
                 limits.max_bytes_per_owner, f"for job {namespace}/{name}", limits)
    _check_share([k for k in kept if (k.client, k.worker) == (new.client, new.worker)], new.size,
                 limits.max_reports_per_source, limits.max_bytes_per_source,
                 f"from worker {new.worker} at {new.client or 'an unknown address'}", limits)
    count, size = len(kept), sum(k.size for k in kept)
    # unsent owners other than the report's own: client address -> its owners' reports, oldest owner first
    by_client: dict[str, dict[tuple[str, str, str], list[KeptReport]]] = defaultdict(dict)
    for report in kept:
        if not report.sent and report.owner != new.owner:
            by_client[report.client].setdefault(report.owner, []).append(report)
    drop: list[KeptReport] = []
    while count + 1 > limits.max_reports or size + new.size > limits.max_bytes:
        if not by_client:
            _refuse(f"{count} reports ({size} bytes) are kept for jobs this node does not hold yet, for jobs the GM "
                    f"sent this node before or for this one; bounds {limits.max_reports} reports, "
                    f"{limits.max_bytes} bytes", limits)
        client = max(by_client, key=lambda c: (sum(len(r) for r in by_client[c].values()),
                                                -min(r[0].seq for r in by_client[c].values())))
        owners = by_client[client]
        oldest = min(owners, key=lambda o: owners[o][0].seq)
        reports = owners.pop(oldest)
        if not owners:
            del by_client[client]
        drop.extend(reports)
        count -= len(reports)
        size -= sum(r.size for r in reports)
    return drop


def _check_share(reports: list[KeptReport], size: int, max_reports: int, max_bytes: int, holder: str,
                 limits: PendingLimits) -> None:
    used = sum(r.size for r in reports)
    if len(reports) >= max_reports or used + size > max_bytes:
        _refuse(f"{len(reports)} reports ({used} bytes) are kept {holder} until their job arrives; bounds "
                f"{max_reports} reports, {max_bytes} bytes", limits)


def _refuse(reason: str, limits: PendingLimits) -> None:
    raise ReportRefused(reason, limits.retry_after)
