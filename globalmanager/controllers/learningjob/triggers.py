"""What the GM can tell about an IL/LL job's train trigger before any LC evaluates it: the metric its condition names
must be one the LC evaluates a train trigger on (``TRAIN_TRIGGER_METRICS``: ``num_of_samples``, a number). Any other
name, or an index into that number, never fires: the job would wait at Train/Waiting forever without a word (Go Sedna
says nothing either). The deploy trigger's metrics are whatever the eval worker reports (``<metric>`` and
``<metric>_delta``), so only the LC can check them, when it decides.

A malformed trigger (no metric, bad operator or threshold) is the LC's to report: it fails Train with the reason.
"""

from __future__ import annotations

from apis.sedna.v1alpha1.common import TRAIN_TRIGGER_METRICS

__all__ = ["UNKNOWN_TRIGGER_METRIC", "train_trigger_problem"]

UNKNOWN_TRIGGER_METRIC = "UnknownTriggerMetric"


def train_trigger_problem(metric: str | None) -> tuple[str, str] | None:
    """``(reason, message)`` when the train trigger's metric (``spec.trainSpec.trigger.condition.metric``) can never
    fire, else ``None``."""
    if not metric or not metric.strip():
        return None
    name, bracket, _ = metric.partition("[")
    known = ", ".join(TRAIN_TRIGGER_METRICS)
    where = f"spec.trainSpec.trigger.condition.metric {metric!r}"
    if name.strip() not in TRAIN_TRIGGER_METRICS:
        return UNKNOWN_TRIGGER_METRIC, (f"{where} is not a metric the train trigger is evaluated on (known: {known}); "
                                        "the trigger never fires")
    if bracket:
        return UNKNOWN_TRIGGER_METRIC, (f"{where} indexes {name.strip()!r}, which is a number, not a list; the trigger "
                                        "never fires")
    return None
