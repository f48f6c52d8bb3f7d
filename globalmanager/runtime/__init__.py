"""Shared controller runtime: labels/selectors, pod builders, status and conditions helpers, the EventRecorder,
self-healing bookkeeping and ``BaseController`` (the Go controller shape)."""

from .events import NORMAL, WARNING, EventRecorder
from .labels import generate_labels, generate_selector, generate_worker_selector
from .pods import WorkerParam, create_pod_with_template, filter_active_pods, is_pod_active, pod_from_template
from .selfheal import PreventRecreation, RecreatedPods
from .status import condition_is_true, get_condition, set_condition, update_status

__all__ = [
    "BaseController",
    "EventRecorder",
    "NORMAL",
    "PreventRecreation",
    "RecreatedPods",
    "WARNING",
    "WorkerParam",
    "condition_is_true",
    "create_pod_with_template",
    "filter_active_pods",
    "generate_labels",
    "generate_selector",
    "generate_worker_selector",
    "get_condition",
    "is_pod_active",
    "pod_from_template",
    "set_condition",
    "update_status",
]


def __getattr__(name: str) -> object:  # BaseController pulls in informers; import it only when asked
    if name == "BaseController":
        from .controller import BaseController

        return BaseController
    raise AttributeError(f"module 'globalmanager.runtime' has no attribute {name!r}")
