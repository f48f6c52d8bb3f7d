"""The pieces flows are written with: checks (``FlowRun -> bool``: what shows a controller did its work), changes
(``dict -> None``: a spec change), actions (``FlowRun -> None``: what the test does to the controller's objects) and
setups (``FlowRun -> None`` before the object exists)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from apis import meta
from apis.resources import DATASETS, PODS

from .base import DATASET_LINES, FlowRun, templates, write_lines

__all__ = [
    "all_of",
    "arm_status_conflict",
    "conflict_taken",
    "count_conditions",
    "delete_owned",
    "grow_dataset",
    "label_templates",
    "last_condition_is",
    "phase_is",
    "processed",
    "recreated",
    "replaced",
    "set_template_annotation",
]

Check = Callable[[FlowRun], bool]
Action = Callable[[FlowRun], None]
Change = Callable[[dict[str, Any]], None]


def all_of(*checks: Check) -> Check:
    return lambda run: all(check(run) for check in checks)


def phase_is(phase: str) -> Check:
    return lambda run: run.status().get("phase") == phase


def last_condition_is(kind: str) -> Check:
    def check(run: FlowRun) -> bool:
        conditions = run.conditions()
        return bool(conditions) and conditions[-1].get("type") == kind
    return check


def count_conditions(stage: str, ctype: str, at_least: int) -> Check:
    """A learning job has at least ``at_least`` conditions ``stage``/``ctype`` (e.g. rounds deployed)."""
    return lambda run: sum(1 for c in run.conditions()
                           if (c.get("stage"), c.get("type")) == (stage, ctype)) >= at_least


def processed(run: FlowRun) -> bool:
    """The controller took the object from its queue and is done with it."""
    return run.queued() > run.baseline and run.idle()


def label_templates(value: str, where: Callable[[dict[str, Any]], Any] = lambda spec: spec) -> Change:
    """Label every pod template under ``where(spec)`` ``sedna-e2e/rollout=value`` (a new template: a rollout)."""
    def change(obj: dict[str, Any]) -> None:
        for template in templates(where(obj.get("spec") or {})):
            template.setdefault("metadata", {}).setdefault("labels", {})["sedna-e2e/rollout"] = value
    return change


def set_template_annotation(key: str, value: str) -> Change:
    def change(obj: dict[str, Any]) -> None:
        for template in templates(obj.get("spec") or {}):
            template.setdefault("metadata", {}).setdefault("annotations", {})[key] = value
    return change


def delete_owned(gvr: Any, name: str | None = None, pick: Callable[[dict[str, Any]], bool] | None = None,
                 memo: str = "deleted") -> Action:
    """Delete one object of ``gvr`` the flow's object controls (named ``name``, or the first ``pick`` accepts) from
    under it, remembering ``(name, uid)`` in ``run.memo[memo]``."""
    def action(run: FlowRun) -> None:
        found = [o for o in run.owned(gvr) if (name is None or meta.name(o) == name) and (pick is None or pick(o))]
        assert found, f"no {gvr.resource} {name or ''} of {run.namespace}/{run.name} to delete"
        victim = sorted(found, key=meta.name)[0]
        run.memo[memo] = (meta.name(victim), meta.uid(victim))
        run.client(gvr).delete(meta.name(victim))
    return action


def _running(obj: dict[str, Any]) -> bool:
    return (obj.get("status") or {}).get("phase") == "Running"


def recreated(gvr: Any, memo: str = "deleted") -> Check:
    """The object deleted by ``delete_owned`` is back under its name (another UID), controlled by the flow's
    object (a pod: Running), and the controller's queue is empty."""
    def check(run: FlowRun) -> bool:
        name, uid = run.memo[memo]
        back = [o for o in run.owned(gvr) if meta.name(o) == name and meta.uid(o) != uid]
        return bool(back) and (gvr != PODS or _running(back[0])) and run.idle()
    return check


def replaced(pick: Callable[[dict[str, Any]], bool] = lambda pod: True, memo: str = "deleted") -> Check:
    """A pod (``pick`` accepts) other than the one deleted by ``delete_owned`` runs for the flow's object."""
    def check(run: FlowRun) -> bool:
        name, _ = run.memo[memo]
        return any(meta.name(p) != name and pick(p) and _running(p) for p in run.owned(PODS)) and run.idle()
    return check


def grow_dataset(name: str | None = None, count: int = DATASET_LINES) -> Action:
    """Append ``count`` samples to the index file of Dataset ``name`` (default: the flow's object's
    ``spec.dataset.name``) on its node."""
    def action(run: FlowRun) -> None:
        dataset_name = name or run.obj["spec"]["dataset"]["name"]
        dataset = run.client(DATASETS).get(dataset_name)
        url, node = dataset["spec"]["url"], dataset["spec"]["nodeName"]
        path = run.rootfs[node] / url.lstrip("/")
        start = sum(1 for line in path.read_text().splitlines() if line.strip())
        write_lines(run.rootfs[node], url, start, count)
    return action


def arm_status_conflict(resource: str, name: Callable[[FlowRun], str] = lambda run: run.name) -> Action:
    """The next status write of ``resource`` ``name(run)`` in the flow's namespace is answered 409, once: the
    writer's re-read after a conflict (``get``) happens on demand."""
    return lambda run: run.faults.conflict_next_write(resource, run.namespace, name(run), "status")


def conflict_taken(resource: str, name: Callable[[FlowRun], str] = lambda run: run.name) -> Check:
    """The conflict armed by ``arm_status_conflict`` was answered."""
    return lambda run: not run.faults.conflict_pending(resource, run.namespace, name(run), "status")
