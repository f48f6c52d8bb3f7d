"""Leader election on a ``coordination.k8s.io/v1`` Lease with client-go ``tools/leaderelection`` semantics.

* A candidate acquires the lease when it is absent, released (empty holder) or expired: the record it last saw has
  not changed for ``lease_duration`` seconds by the *local* clock (clocks of different hosts are never compared).
* The leader renews every ``retry_period``; if it cannot renew for ``renew_deadline`` it stops leading.
* Writes carry the observed ``resourceVersion``: a concurrent writer makes ours fail with 409 and we retry next period.
* On shutdown the leader releases the lease (holder cleared, ``leaseDurationSeconds: 1``, like ReleaseOnCancel) so a
  standby takes over at once.
"""

from __future__ import annotations

import random
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Protocol

import structlog

from apis import errors
from apis.client import ClientsetBase

__all__ = [
    "LeaderElectionClock",
    "LeaderElector",
    "LeaderCallbacks",
    "LeaseRecord",
    "RealLeaderElectionClock",
    "default_identity",
    "format_micro_time",
]

log = structlog.get_logger(__name__)


def default_identity() -> str:
    """``<hostname>_<uuid4>``, unique per process as client-go recommends."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def format_micro_time(dt: datetime) -> str:
    """metav1.MicroTime: RFC 3339 UTC with microseconds, e.g. ``2026-01-02T03:04:05.000000Z``."""
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElectionClock(Protocol):
    def monotonic(self) -> float:
        """Seconds on a clock that never goes back; used for expiry and deadlines."""

    def utcnow(self) -> datetime:
        """Wall-clock time written into the lease."""

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        """Wait up to ``seconds``; True when ``stop`` was set."""


class RealLeaderElectionClock:
    def monotonic(self) -> float:
        return time.monotonic()

    def utcnow(self) -> datetime:
        return datetime.now(timezone.utc)

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        return stop.wait(max(0.0, seconds))


@dataclass(frozen=True)
class LeaseRecord:
    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str = ""
    renew_time: str = ""
    lease_transitions: int = 0

    @classmethod
    def from_lease(cls, lease: dict[str, Any]) -> LeaseRecord:
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=spec.get("holderIdentity") or "",
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime") or "",
            renew_time=spec.get("renewTime") or "",
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "leaseTransitions": self.lease_transitions,
        }
        if self.acquire_time:
            spec["acquireTime"] = self.acquire_time
        if self.renew_time:
            spec["renewTime"] = self.renew_time
        return spec


@dataclass
class LeaderCallbacks:
    on_started_leading: Callable[[threading.Event], None]
    on_stopped_leading: Callable[[], None]
    on_new_leader: Callable[[str], None] | None = None


class LeaderElector:
    """One candidate for the lease ``namespace/name``. ``run(stop)`` blocks until stop or lost leadership."""

    def __init__(
        self,
        clientset: ClientsetBase,
        lease_name: str,
        namespace: str,
        callbacks: LeaderCallbacks,
        identity: str | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = True,
        clock: LeaderElectionClock | None = None,
        leader_stop_timeout: float = 30.0,
    ) -> None:
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if renew_deadline <= 1.2 * retry_period:
            raise ValueError("renew_deadline must be greater than 1.2 × retry_period")
        self._leases = clientset.coordination_v1().leases(namespace)
        self.lease_name = lease_name
        self.namespace = namespace
        self.identity = identity or default_identity()
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.callbacks = callbacks
        self.leader_stop_timeout = leader_stop_timeout
        self.clock: LeaderElectionClock = clock or RealLeaderElectionClock()
        self._lock = threading.Lock()
        self._observed: LeaseRecord | None = None
        self._observed_rv = ""
        self._observed_time = 0.0
        self._reported_leader = ""
        self._leading = False

    # -- state ----------------------------------------------------------------------------------------------------
    def is_leader(self) -> bool:
        with self._lock:
            return self._observed is not None and self._observed.holder_identity == self.identity

    def get_leader(self) -> str:
        with self._lock:
            return self._observed.holder_identity if self._observed else ""

    @property
    def leading(self) -> bool:
        """True while ``on_started_leading`` has been called and leadership not yet given up."""
        return self._leading

    # -- one round ------------------------------------------------------------------------------------------------
    def try_acquire_or_renew(self) -> bool:
        """One attempt to acquire or renew the lease; True when we hold it afterwards."""
        now_wall = format_micro_time(self.clock.utcnow())
        desired = LeaseRecord(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, int(round(self.lease_duration))),
            acquire_time=now_wall,
            renew_time=now_wall,
            lease_transitions=0,
        )
        try:
            lease = self._leases.get(self.lease_name)
        except errors.NotFoundError:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.lease_name, "namespace": self.namespace},
                "spec": desired.to_spec(),
            }
            try:
                created = self._leases.create(body)
            except errors.ApiError as exc:
                log.info("lease create failed", lease=self._key(), error=str(exc))
                return False
            self._set_observed(LeaseRecord.from_lease(created), created)
            return True
        except errors.ApiError as exc:
            log.warning("lease get failed", lease=self._key(), error=str(exc))
            return False

        old = LeaseRecord.from_lease(lease)
        if old != self._observed:
            self._set_observed(old, lease)
        held_by_other = old.holder_identity and old.holder_identity != self.identity
        if held_by_other and self._observed_time + old.lease_duration_seconds > self.clock.monotonic():
            return False  # lease not expired yet
        if old.holder_identity == self.identity:
            desired = LeaseRecord(
                holder_identity=self.identity,
                lease_duration_seconds=desired.lease_duration_seconds,
                acquire_time=old.acquire_time or now_wall,
                renew_time=now_wall,
                lease_transitions=old.lease_transitions,
            )
        else:
            desired = LeaseRecord(
                holder_identity=self.identity,
                lease_duration_seconds=desired.lease_duration_seconds,
                acquire_time=now_wall,
                renew_time=now_wall,
                lease_transitions=old.lease_transitions + 1,
            )
        updated_obj = dict(lease)
        updated_obj["spec"] = {**(lease.get("spec") or {}), **desired.to_spec()}
        try:
            updated = self._leases.update(updated_obj)
        except errors.ApiError as exc:
            # 409: someone else wrote the lease since we read it; we try again next period
            log.info("lease update failed", lease=self._key(), error=str(exc))
            return False
        self._set_observed(LeaseRecord.from_lease(updated), updated)
        return True

    def release(self) -> bool:
        """Give the lease up if we hold it (holder cleared, duration 1 s); True on success."""
        if not self.is_leader():
            return True
        now_wall = format_micro_time(self.clock.utcnow())
        try:
            lease = self._leases.get(self.lease_name)
        except errors.ApiError as exc:
            log.warning("lease release failed", lease=self._key(), error=str(exc))
            return False
        current = LeaseRecord.from_lease(lease)
        if current.holder_identity != self.identity:
            return True
        record = LeaseRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now_wall,
            renew_time=now_wall,
            lease_transitions=current.lease_transitions,
        )
        body = dict(lease)
        body["spec"] = {**(lease.get("spec") or {}), **record.to_spec()}
        try:
            updated = self._leases.update(body)
        except errors.ApiError as exc:
            log.warning("lease release failed", lease=self._key(), error=str(exc))
            return False
        self._set_observed(LeaseRecord.from_lease(updated), updated)
        log.info("lease released", lease=self._key(), identity=self.identity)
        return True

    # -- loop -----------------------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Acquire, lead (callback in its own thread) and renew until ``stop`` is set or leadership is lost."""
        log.info("attempting to acquire leader lease", lease=self._key(), identity=self.identity)
        while not stop.is_set():
            if self.try_acquire_or_renew():
                break
            self._maybe_report_new_leader()
            if self.clock.sleep(stop, self.retry_period * (1 + 0.2 * random.random())):
                return
        if stop.is_set():
            return
        log.info("successfully acquired lease", lease=self._key(), identity=self.identity)
        self._maybe_report_new_leader()
        leading_stop = threading.Event()
        self._leading = True
        leader_thread = threading.Thread(
            target=self.callbacks.on_started_leading, args=(leading_stop,), name="leader-run", daemon=True
        )
        leader_thread.start()
        try:
            self._renew_loop(stop)
        finally:
            leading_stop.set()
            self._leading = False
            if stop.is_set() and self.release_on_cancel:
                # the leader's work must stop (bounded) before the lease is handed over
                leader_thread.join(self.leader_stop_timeout)
                if leader_thread.is_alive():
                    log.warning("leader work still running after the stop timeout; releasing anyway", lease=self._key())
                self.release()
            try:
                self.callbacks.on_stopped_leading()
            except Exception:
                log.exception("on_stopped_leading failed", lease=self._key())

    def _renew_loop(self, stop: threading.Event) -> None:
        last_renew = self.clock.monotonic()
        while not stop.is_set():
            if self.clock.sleep(stop, self.retry_period):
                return
            if self.try_acquire_or_renew():
                last_renew = self.clock.monotonic()
                continue
            if not self.is_leader() and self.get_leader():
                log.info("lease taken over by another candidate", lease=self._key(), leader=self.get_leader())
                self._maybe_report_new_leader()
                return
            if self.clock.monotonic() - last_renew >= self.renew_deadline:
                log.error("failed to renew lease within the renew deadline", lease=self._key())
                return

    # -- helpers --------------------------------------------------------------------------------------------------
    def _set_observed(self, record: LeaseRecord, lease: dict[str, Any]) -> None:
        with self._lock:
            self._observed = record
            self._observed_rv = (lease.get("metadata") or {}).get("resourceVersion") or ""
            self._observed_time = self.clock.monotonic()

    def _maybe_report_new_leader(self) -> None:
        leader = self.get_leader()
        if not leader or leader == self._reported_leader:
            return
        self._reported_leader = leader
        if leader != self.identity:
            log.info("new leader elected", lease=self._key(), leader=leader)
        if self.callbacks.on_new_leader is not None:
            try:
                self.callbacks.on_new_leader(leader)
            except Exception:
                log.exception("on_new_leader failed", lease=self._key())

    def _key(self) -> str:
        return f"{self.namespace}/{self.lease_name}"

