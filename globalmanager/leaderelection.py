"""Leader election on a ``coordination.k8s.io/v1`` Lease with client-go ``tools/leaderelection`` semantics.

* A candidate acquires the lease when it is absent, released (empty holder) or expired: the record it last saw has
  not changed for ``lease_duration`` seconds by the *local* clock (clocks of different hosts are never compared).
* The leader renews every ``retry_period``; if it cannot renew for ``renew_deadline`` it stops leading. A renewal
  that only answers after the deadline counts as lost too.
* Every attempt (read, then create or update) is bounded by ``renew_deadline``, a renewal by what is left of it since
  the last renewal, as client-go bounds its renew loop: on the real clientset the elector uses its own connection
  pool whose timeout (connect and read together) is set before each request to what is left of the attempt. A slow
  API server (a round trip of a good part of ``retry_period``) therefore still gets its answers in.
* A write that got no answer may still have been applied: the lease is read back at once, and a lease carrying
  exactly the record we wrote is ours (client-go reconciles the same way through its observed record: a lease held
  under our identity is renewed, never waited out).
* An unreachable or failing API server is a failed round, never an exception: the elector keeps retrying, and
  ``lease_round_status()`` says why the last round failed (read, create or write refused, or no answer).
* Writes carry the observed ``resourceVersion``: a concurrent writer makes ours fail with 409 and we retry next period.
* On shutdown the leader keeps renewing while its work drains (bounded by ``leader_stop_timeout``), then releases
  the lease (holder cleared, ``leaseDurationSeconds: 1``, like ReleaseOnCancel) so a standby takes over at once.
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
from apis.http_transport import ApiConnectionError, ApiConnectionTimeoutError, ResponseDecodeError

__all__ = [
    "LEASE_ERRORS",
    "LeaderElectionClock",
    "LeaderElector",
    "LeaderCallbacks",
    "LeaseRecord",
    "RealLeaderElectionClock",
    "default_identity",
    "format_micro_time",
]

log = structlog.get_logger(__name__)

LEASE_ERRORS = (errors.ApiError, ApiConnectionError, ResponseDecodeError)
"""What a lease request may raise when the API server refuses, fails or cannot be reached: a failed round."""

MIN_REQUEST_TIMEOUT = 0.01


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


def _dedicated_lease_clientset(clientset: ClientsetBase, timeout: float) -> tuple[ClientsetBase, Any]:
    """For the real clientset: a private one on the same configuration (its own pool, so that the elector can set
    its timeouts per request without touching other callers). The fake clientset is used as it is."""
    from apis.clientset import Clientset

    if not isinstance(clientset, Clientset):
        return clientset, None
    dedicated = Clientset(
        clientset.configuration,
        connect_timeout=timeout,
        request_timeout=timeout,
        user_agent=f"{clientset.transport.user_agent} leader-election",
        pool_maxsize=1,
    )
    return dedicated, dedicated.transport


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
        self._lease_clientset, self._transport = _dedicated_lease_clientset(clientset, renew_deadline)
        self._leases = self._lease_clientset.coordination_v1().leases(namespace)
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
        self._observed_time = 0.0
        self._last_good_round: float | None = None
        self._last_round_error = ""
        self._step = "read"  # what the current attempt is doing, for error reports
        self._attempt_end = 0.0  # clock.monotonic() by which the current attempt's requests must be answered
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

    def lease_rounds_healthy(self) -> bool:
        """True when a lease round completed within the last ``lease_duration`` (see ``lease_round_status``)."""
        return self.lease_round_status()[0]

    def lease_round_status(self) -> tuple[bool, str]:
        """``(healthy, why)``: healthy when a round completed within the last ``lease_duration``: the lease was read
        and either held by a live other candidate, or written by us, or lost to a concurrent writer. A candidate that
        cannot read or write its lease (unreachable, namespace missing, forbidden) is not; ``why`` says what failed."""
        with self._lock:
            last, error = self._last_good_round, self._last_round_error
        if last is not None and self.clock.monotonic() - last <= self.lease_duration:
            return True, ""
        when = "yet" if last is None else f"within {self.lease_duration:g}s"
        return False, f"no lease round succeeded {when}" + (f"; last error: {error}" if error else "")

    def request_timeout(self, deadline: float | None = None) -> float:
        """Seconds one attempt may take: ``renew_deadline``, cut to what is left before ``deadline``
        (a ``clock.monotonic()`` value) when given."""
        budget = self.renew_deadline
        if deadline is not None:
            budget = min(budget, deadline - self.clock.monotonic())
        return max(MIN_REQUEST_TIMEOUT, budget)

    def close(self) -> None:
        """Close the elector's private connection pool (if it has one)."""
        if self._transport is not None:
            self._lease_clientset.close()  # type: ignore[attr-defined]

    # -- one round ------------------------------------------------------------------------------------------------
    def try_acquire_or_renew(self, deadline: float | None = None) -> bool:
        """One attempt to acquire or renew the lease; True when we hold it afterwards. Never raises for API or
        connection failures (they are a failed attempt). ``deadline`` bounds the attempt (see ``request_timeout``)."""
        self._attempt_end = self.clock.monotonic() + self.request_timeout(deadline)
        self._step = "read"
        try:
            result = self._try_acquire_or_renew()
        except LEASE_ERRORS as exc:
            error = f"cannot {self._step} lease {self._key()}: {exc}"
            with self._lock:
                self._last_round_error = error
            log.warning("lease request failed", lease=self._key(), step=self._step, error=str(exc))
            return False
        with self._lock:
            self._last_good_round = self.clock.monotonic()
        return result

    def _request(self, step: str, fn: Callable[..., Any], *args: Any) -> Any:
        """Call ``fn`` with the transport's timeout set to what is left of the attempt (connect and read together)."""
        self._step = step
        if self._transport is not None:
            left = self._attempt_end - self.clock.monotonic()
            if left <= 0:
                raise ApiConnectionTimeoutError("lease", self._key(), "no time left in this attempt")
            left = max(MIN_REQUEST_TIMEOUT, left)
            self._transport.connect_timeout = self._transport.read_timeout = self._transport.total_timeout = left
        return fn(*args)

    def _try_acquire_or_renew(self) -> bool:
        now_wall = format_micro_time(self.clock.utcnow())
        desired = LeaseRecord(
            holder_identity=self.identity,
            lease_duration_seconds=max(1, int(round(self.lease_duration))),
            acquire_time=now_wall,
            renew_time=now_wall,
            lease_transitions=0,
        )
        try:
            lease = self._request("read", self._leases.get, self.lease_name)
        except errors.NotFoundError:
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.lease_name, "namespace": self.namespace},
                "spec": desired.to_spec(),
            }
            try:
                created = self._request("create", self._leases.create, body)
            except (errors.AlreadyExistsError, errors.ConflictError) as exc:  # another candidate created it first
                log.info("lease create lost a race", lease=self._key(), error=str(exc))
                return False
            except ApiConnectionError as exc:
                return self._read_back(desired, exc, "create")
            self._set_observed(LeaseRecord.from_lease(created))
            return True

        old = LeaseRecord.from_lease(lease)
        if old != self._observed:
            self._set_observed(old)
        held_by_other = old.holder_identity and old.holder_identity != self.identity
        # expiry by the duration written in the lease (its holder's), measured on our own clock
        if held_by_other and self._observed_time + old.lease_duration_seconds > self.clock.monotonic():
            return False
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
            updated = self._request("write", self._leases.update, updated_obj)
        except errors.ConflictError as exc:  # someone else wrote the lease since we read it: next period
            log.info("lease update conflict", lease=self._key(), error=str(exc))
            return False
        except ApiConnectionError as exc:
            return self._read_back(desired, exc, "write")
        self._set_observed(LeaseRecord.from_lease(updated))
        return True

    def _read_back(self, written: LeaseRecord, lost: ApiConnectionError, step: str) -> bool:
        """A write got no answer (timeout, reset), yet the server may have applied it: read the lease and compare.
        True when it holds exactly the record we wrote; else ``lost`` is raised (a failed ``step``)."""
        log.info("lease write got no answer; reading the lease back", lease=self._key(), error=str(lost))
        try:
            lease = self._request("read back", self._leases.get, self.lease_name)
        except errors.NotFoundError:
            lease = None
        current = LeaseRecord.from_lease(lease) if lease is not None else None
        if current is not None and current != self._observed:
            self._set_observed(current)
        if current is None or (current.holder_identity, current.renew_time, current.lease_transitions) != (
                written.holder_identity, written.renew_time, written.lease_transitions):
            self._step = step
            raise lost
        log.info("the lease write had been applied", lease=self._key())
        return True

    def release(self) -> bool:
        """Give the lease up if we hold it (holder cleared, duration 1 s); True on success. Never raises for API or
        connection failures."""
        if not self.is_leader():
            return True
        self._attempt_end = self.clock.monotonic() + self.request_timeout()
        try:
            released = self._release()
        except LEASE_ERRORS as exc:
            log.warning("lease release failed", lease=self._key(), error=str(exc))
            return False
        if released:
            log.info("lease released", lease=self._key(), identity=self.identity)
        return True

    def _release(self) -> bool:
        now_wall = format_micro_time(self.clock.utcnow())
        lease = self._request("read", self._leases.get, self.lease_name)
        current = LeaseRecord.from_lease(lease)
        if current.holder_identity != self.identity:
            return False
        record = LeaseRecord(
            holder_identity="",
            lease_duration_seconds=1,
            acquire_time=now_wall,
            renew_time=now_wall,
            lease_transitions=current.lease_transitions,
        )
        body = dict(lease)
        body["spec"] = {**(lease.get("spec") or {}), **record.to_spec()}
        updated = self._request("release", self._leases.update, body)
        self._set_observed(LeaseRecord.from_lease(updated))
        return True

    # -- loop -----------------------------------------------------------------------------------------------------
    def run(self, stop: threading.Event) -> None:
        """Acquire, lead (callback in its own thread) and renew until ``stop`` is set or leadership is lost.

        On stop the lease is kept (renewed) while the leader's work drains, at most ``leader_stop_timeout``, and then
        released. A stop that arrives while the lease is being acquired releases it before returning."""
        log.info("attempting to acquire leader lease", lease=self._key(), identity=self.identity)
        try:
            acquired_at = self._acquire(stop)
            if acquired_at is None:
                return
            if stop.is_set():
                if self.release_on_cancel:
                    self.release()
                return
            self._lead(stop, acquired_at)
        finally:
            self.close()

    def _acquire(self, stop: threading.Event) -> float | None:
        """Try every ``retry_period`` (with jitter) until acquired (returns the start time of the winning attempt)
        or stopped (None)."""
        while not stop.is_set():
            started = self.clock.monotonic()
            if self.try_acquire_or_renew():
                return started
            self._maybe_report_new_leader()
            if self.clock.sleep(stop, self.retry_period * (1 + 0.2 * random.random())):
                return None
        return None

    def _lead(self, stop: threading.Event, acquired_at: float) -> None:
        log.info("successfully acquired lease", lease=self._key(), identity=self.identity)
        self._maybe_report_new_leader()
        leading_stop, leader_done = threading.Event(), threading.Event()

        def lead() -> None:
            try:
                self.callbacks.on_started_leading(leading_stop)
            except Exception:
                log.exception("on_started_leading failed", lease=self._key())
            finally:
                leader_done.set()

        self._leading = True
        leader_thread = threading.Thread(target=lead, name="leader-run", daemon=True)
        leader_thread.start()
        kept = False
        try:
            last_renew = acquired_at
            kept, last_renew = self._renew_loop(stop, stop.is_set, last_renew)
            leading_stop.set()
            if kept and stop.is_set():
                # keep the lease while the leader's work stops, so no standby starts working next to it
                drain_end = self.clock.monotonic() + self.leader_stop_timeout

                def drained() -> bool:
                    return leader_done.is_set() or self.clock.monotonic() >= drain_end

                kept, last_renew = self._renew_loop(leader_done, drained, last_renew)
                if kept and not leader_done.is_set():
                    log.warning("leader work still running after the stop timeout; releasing anyway", lease=self._key())
        finally:
            leading_stop.set()
            self._leading = False
            if kept and stop.is_set() and self.release_on_cancel:
                self.release()
            try:
                self.callbacks.on_stopped_leading()
            except Exception:
                log.exception("on_stopped_leading failed", lease=self._key())

    def _renew_loop(self, wake: threading.Event, finished: Callable[[], bool], last_renew: float) -> tuple[bool, float]:
        """Renew every ``retry_period`` (a set ``wake`` cuts the wait short) until ``finished()``.

        Returns ``(still_leader, last_renew)``; leadership is lost when another candidate holds the lease, or when no
        renewal succeeded within ``renew_deadline`` of the last one (an attempt that ends after that counts as failed).
        """
        while True:
            self.clock.sleep(wake, self.retry_period)
            if finished():
                return True, last_renew
            deadline = last_renew + self.renew_deadline
            started = self.clock.monotonic()
            renewed = self.try_acquire_or_renew(deadline=deadline)
            if renewed and self.clock.monotonic() <= deadline:
                last_renew = started
                continue
            if renewed:
                log.error("lease renewal answered after the renew deadline; giving up leadership", lease=self._key())
                return False, last_renew
            if not self.is_leader() and self.get_leader():
                log.info("lease taken over by another candidate", lease=self._key(), leader=self.get_leader())
                self._maybe_report_new_leader()
                return False, last_renew
            if self.clock.monotonic() >= deadline:
                log.error("failed to renew lease within the renew deadline", lease=self._key())
                return False, last_renew

    # -- helpers --------------------------------------------------------------------------------------------------
    def _set_observed(self, record: LeaseRecord) -> None:
        with self._lock:
            self._observed = record
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
