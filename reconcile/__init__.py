"""The reconcile runner every controller uses (library layer on ``informers`` + ``workqueue`` + ``apis``).

A controller author writes ``sync(key) -> Result | None`` and hands it to a ``Controller``, which owns a named
``RateLimitingQueue``, the workers, retries, metrics and a bounded drain::

    controller = Controller("ConfigMapMirror", mirror.sync, workers=2)
    informer.add_event_handler(ResourceEventHandlerFuncs(add_func=controller.enqueue_controller, ...))
    controller.add_cache_sync(informer.has_synced)
    controller.run(stop)

``Result(requeue_after=...)``/``Result(requeue=True)`` ask for another sync; ``RetryableError(message, delay)`` and
``TerminalError(message)`` say how a failure is retried (any other exception: rate-limited retry).
"""

from reconcile.backoff import MAX_RETRY_DELAY, SednaBackoff, controller_rate_limiter
from reconcile.controller import WORKER_RESTART_PERIOD, Controller
from reconcile.errors import RetryableError, TerminalError
from reconcile.failures import RETRY_LOG_INTERVAL, failure_fields
from reconcile.identity import object_identity
from reconcile.metrics import ControllerMetrics, NoopControllerMetrics, PrometheusControllerMetrics
from reconcile.reconciler import KeyT, Reconciler, SyncFunc
from reconcile.result import Result

__all__ = [
    "Controller",
    "ControllerMetrics",
    "KeyT",
    "MAX_RETRY_DELAY",
    "NoopControllerMetrics",
    "PrometheusControllerMetrics",
    "RETRY_LOG_INTERVAL",
    "Reconciler",
    "Result",
    "RetryableError",
    "SednaBackoff",
    "SyncFunc",
    "TerminalError",
    "WORKER_RESTART_PERIOD",
    "controller_rate_limiter",
    "failure_fields",
    "object_identity",
]
