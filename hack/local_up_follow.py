"""``--sample``'s last step: every sample followed at once, its status changes and the Warning Events about it printed
as they come, until each is where its kind ends (``Follower.outcome``); a failure that nothing in a local run cures
ends the run at once, naming its reason and what the GM or the kubelet said (the field path, where there is one).

Terminal, seen on the object's current condition (a learning job notes a problem there), in a Warning Event about
the object, about an object it names (a Dataset's) or about one of its pods:

* a ``Failed`` condition or phase;
* ``InvalidSpec``, ``UnknownTriggerMetric`` (the spec stays as the sample wrote it), ``URLNotFound``, ``URLInvalid``,
  ``FormatUnsupported`` (a Dataset's index file: local_up writes only the bundled samples' demo data);
* ``NodeNotFound``, ``ModelNotFound``, ``DatasetNotFound``, ``SecretNotFound`` and a pod's ``FailedScheduling``, once
  the API server confirms the node or object missing: the GM may see a job before a Model local_up created just
  before it, and says ``ModelNotFound`` until its cache has the Model; that passes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from apis import errors, meta, resources
from apis.client import ClientsetBase, ResourceClient
from globalmanager.runtime.references import named_nodes

from ._procs import pause
from .local_up_sample import LEARNING_KINDS, Key, Say, key_of

AT_ONCE = frozenset({"InvalidSpec", "UnknownTriggerMetric", "URLNotFound", "URLInvalid", "FormatUnsupported"})
MISSING = {"NodeNotFound": "Node", "FailedScheduling": "Node", "ModelNotFound": "Model",
           "DatasetNotFound": "Dataset", "SecretNotFound": "Secret"}
_API_VERSIONS = {"Node": "v1", "Secret": "v1", "Model": "sedna.io/v1alpha1", "Dataset": "sedna.io/v1alpha1"}


class Problem(NamedTuple):
    reason: str
    message: str
    node: str = ""  # a pod's FailedScheduling: the node it is bound to


def _client(cs: ClientsetBase, api_version: str, kind: str, namespace: str) -> ResourceClient:
    info = resources.lookup_kind(api_version, kind)
    return cs.resource(info.gvr, namespace if info.namespaced else "")


def exists(cs: ClientsetBase, kind: str, namespace: str, name: str) -> bool:
    """Whether the API server has the object; True when it cannot tell (a missing one is never assumed)."""
    try:
        _client(cs, _API_VERSIONS[kind], kind, namespace).get(name)
    except errors.NotFoundError:
        return False
    except errors.ApiError:
        return True
    return True


@dataclass
class Follower:
    """Prints what changes in one object's status and tells whether it reached its kind's end. ``named``: the
    objects it names (its Models, Datasets, Secrets, and theirs); ``datasets``: those Datasets' objects."""

    obj: dict[str, Any]
    say: Say
    named: list[Key] = field(default_factory=list)
    datasets: list[dict[str, Any]] = field(default_factory=list)
    printed_conditions: int = 0
    last_note: tuple[Any, Any] = (None, None)
    last: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        kind, _ns, name = key_of(self.obj)
        return f"{kind.lower()}/{name}"

    def show(self, status: dict[str, Any]) -> None:
        conditions = status.get("conditions") or []
        new = conditions[self.printed_conditions:]
        for c in new:
            self._show_condition(c)
        note = (conditions[-1].get("reason"), conditions[-1].get("message")) if conditions else (None, None)
        if not new and note != self.last_note and note[0]:
            self._show_condition(conditions[-1])  # a note on the current condition: the GM's reason to wait
        self.last_note = note
        self.printed_conditions = len(conditions)
        for name, value in (("phase", status.get("phase")), ("numberOfSamples", status.get("numberOfSamples")),
                            ("metrics", _metrics(status.get("metrics")))):
            if value not in (None, "", []) and self.last.get(name) != str(value):
                self.last[name] = str(value)
                self.say(f"    {self.label} {name}={value}")

    def _show_condition(self, c: dict[str, Any]) -> None:
        stage = f"{c.get('stage')}/" if c.get("stage") else ""
        text = " ".join(str(c[k]) for k in ("reason", "message") if c.get(k))
        self.say(f"    {self.label} {stage}{c.get('type')} {text}".rstrip())

    def outcome(self, status: dict[str, Any]) -> tuple[bool | None, str]:
        """(True, why) at the end, (False, why) on a failed phase or condition, (None, "") meanwhile."""
        kind = self.obj["kind"]
        conditions = status.get("conditions") or []
        failed = failed_condition(status)
        if failed is not None or status.get("phase") == "Failed":
            why = (failed or {}).get("message") or (failed or {}).get("reason") or "phase Failed"
            reason = (failed or {}).get("reason")
            return False, f"failed: {reason}: {why}" if reason and reason != why else f"failed: {why}"
        if kind == "Dataset":
            count = status.get("numberOfSamples")
            return (True, f"numberOfSamples={count}, reported by the LC") if count is not None else (None, "")
        if kind == "Model":
            return True, "created"
        if kind in LEARNING_KINDS:
            done = any((c.get("stage"), c.get("type")) == ("Deploy", "Completed") for c in conditions)
            return (True, "one round Train → Eval → Deploy done") if done else (None, "")
        if kind == "FederatedLearningJob":
            rounds = [c for c in conditions if c.get("type") == "Training"]
            if status.get("phase") == "Succeeded":
                return (True, f"Succeeded after {len(rounds)} round reports") if rounds else (
                    False, "Succeeded, but no round report reached the job (are the LCs of its nodes running?)")
            return None, ""
        if kind == "JointInferenceService":
            if conditions and conditions[-1].get("type") == "Running" and _metrics(status.get("metrics")):
                return True, "Running, the edge worker's reports in status.metrics"
            return None, ""
        if kind.endswith("Service"):
            running = bool(conditions) and conditions[-1].get("type") == "Running"
            return (True, "Running") if running else (None, "")
        return (True, "Succeeded") if status.get("phase") == "Succeeded" else (None, "")

    def problems(self, status: dict[str, Any], warnings: Iterable[Problem]) -> list[Problem]:
        """What may stop the object: the reasons of ``warnings`` (their messages the plainest), then of its current
        and failed conditions."""
        conditions = status.get("conditions") or []
        failed = failed_condition(status)
        return list(warnings) + [Problem(str(c["reason"]), str(c.get("message") or ""))
                                 for c in [*conditions[-1:], failed] if c is not None and c.get("reason")]

    def missing(self, cs: ClientsetBase, problem: Problem) -> bool:
        """Whether the API server confirms what ``problem`` says is missing (see the module doc)."""
        kind = MISSING[problem.reason]
        ns = key_of(self.obj)[1]
        if problem.node:
            return not exists(cs, "Node", "", problem.node)
        if kind == "Node":
            nodes = {n for n, _ in named_nodes(self.obj)} | {
                str((d.get("spec") or {}).get("nodeName") or "") for d in self.datasets} - {""}
            return not nodes or any(not exists(cs, "Node", "", n) for n in sorted(nodes))
        named = [k for k in self.named if k[0] == kind]
        return not named or any(not exists(cs, kind, k[1] or ns, k[2]) for k in named)

    def terminal(self, cs: ClientsetBase, status: dict[str, Any], warnings: Iterable[Problem]) -> Problem | None:
        for problem in self.problems(status, warnings):
            if problem.reason in AT_ONCE or (problem.reason in MISSING and self.missing(cs, problem)):
                return problem
        return None

    def where(self, node: str) -> str:
        """The field of the object that names ``node`` ("" if none does)."""
        return next((w for n, w in named_nodes(self.obj) if n == node), "")


def failed_condition(status: dict[str, Any]) -> dict[str, Any] | None:
    conditions = status.get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Failed" and c.get("status", "True") == "True"), None)


def _metrics(metrics: Any) -> str:
    if not isinstance(metrics, list):
        return ""
    return ", ".join(f"{m.get('key')}={m.get('value')}" for m in metrics if isinstance(m, dict))


class Warnings:
    """The Warning Events of the followed objects' namespaces, each printed once; a pod's are its job's (by the
    GM's ``<kind>.sedna.io/name`` label or an owner reference)."""

    def __init__(self, cs: ClientsetBase, say: Say) -> None:
        self._cs = cs
        self._say = say
        self._printed: set[str] = set()
        self._pods: dict[str, tuple[dict[str, str], set[str], str]] = {}  # uid → labels, owner uids, node

    def read(self, namespaces: Iterable[str]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for ns in sorted(set(namespaces)):
            try:
                events += self._cs.core_v1().events(ns).list(field_selector="type=Warning").get("items") or []
            except errors.ApiError as exc:
                self._say(f"    cannot list the Warning Events of namespace {ns}: {exc}")
        for event in events:
            involved = event.get("involvedObject") or {}
            if meta.uid(event) not in self._printed:
                self._printed.add(meta.uid(event))
                self._say(f"    {str(involved.get('kind')).lower()}/{involved.get('name')} Warning "
                          f"{event.get('reason')}: {event.get('message')}")
        return events

    def about(self, follower: Follower, uid: str, events: Iterable[dict[str, Any]]) -> list[Problem]:
        """The problems ``events`` tell about the followed object (of ``uid``), the objects it names or its pods."""
        kind, ns, name = key_of(follower.obj)
        found: list[Problem] = []
        for event in events:
            involved = event.get("involvedObject") or {}
            reason, message = str(event.get("reason") or ""), str(event.get("message") or "")
            if involved.get("uid") == uid or (involved.get("kind"), involved.get("namespace"),
                                              involved.get("name")) in follower.named:
                found.append(Problem(reason, message))
            elif involved.get("kind") == "Pod" and involved.get("namespace") == ns and reason == "FailedScheduling":
                labels, owners, node = self._pod(ns, str(involved.get("name")), str(involved.get("uid")))
                if labels.get(f"{kind.lower()}.sedna.io/name") == name or uid in owners:
                    where = follower.where(node)
                    found.append(Problem(reason, f"pod {involved.get('name')}: {message}"
                                                 + (f" (the {kind}'s {where})" if where else ""), node))
        return found

    def _pod(self, ns: str, name: str, uid: str) -> tuple[dict[str, str], set[str], str]:
        if uid not in self._pods:
            try:
                pod = self._cs.core_v1().pods(ns).get(name)
            except errors.ApiError:
                return {}, set(), ""
            self._pods[uid] = (dict(meta.labels(pod)), {str(o.get("uid")) for o in meta.owner_references(pod)},
                               str((pod.get("spec") or {}).get("nodeName") or ""))
        return self._pods[uid]


def follow_all(cs: ClientsetBase, followers: list[tuple[Follower, str]], timeout: float, say: Say,
               nodes: Iterable[str] = ()) -> bool:
    """Follow every ``(follower, uid)`` at once until each reached its end (True), one failed or ``timeout`` (False).
    ``nodes``: the nodes of this local run, named when a node is missing."""
    pending = list(followers)
    warnings = Warnings(cs, say)
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        events = warnings.read(key_of(f.obj)[1] for f, _ in pending)
        for follower, uid in list(pending):
            kind, ns, name = key_of(follower.obj)
            try:
                status = _client(cs, follower.obj["apiVersion"], kind, ns).get(name).get("status") or {}
            except errors.ApiError as exc:
                say(f"    cannot read {kind} {ns}/{name}: {exc}")
                status = {}
            follower.show(status)
            done, why = follower.outcome(status)
            # at its end, only the current state counts (a Warning Event stays after what it said was cured)
            stop = follower.terminal(cs, status, [] if done else warnings.about(follower, uid, events))
            failed = failed_condition(status) or {}
            if done is False and stop is None and failed.get("reason") in MISSING:
                done = None  # failed for want of an object that exists now: the GM's next sync sees it
            if stop is not None:
                hint = f" (its nodes: {', '.join(nodes)})" if MISSING.get(stop.reason) == "Node" else ""
                say(f"==> {kind} {ns}/{name}: {stop.reason}: {stop.message}")
                say(f"    nothing in this local run will change that{hint}: stopping")
                done, why = False, ""
            if done is None:
                continue
            if why:
                say(f"==> {kind} {ns}/{name}: {why}")
            pending.remove((follower, uid))
            if not done:
                for other, _ in pending:
                    say(f"==> {other.obj['kind']} {key_of(other.obj)[1]}/{key_of(other.obj)[2]}: not followed "
                        "further (the run stops at the first failure)")
                return False
        if pending:
            pause(0.2)
    for follower, _ in pending:
        kind, ns, name = key_of(follower.obj)
        say(f"==> timed out after {timeout:.0f}s: {kind} {ns}/{name} did not reach its end")
    return not pending
