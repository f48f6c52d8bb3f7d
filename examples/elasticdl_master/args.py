"""The master's command line: ElasticDL's flag names (``elasticdl_client.common.args``), so the master pod the
ElasticAIJob operator builds (``python -m elasticdl.python.master.main --flag 'value' ...``) starts it unchanged.

* ElasticDL flags this master uses keep ElasticDL's names, types and defaults (``--job_name`` (required),
  ``--namespace``, ``--num_workers``, ``--worker_image``/``--image_name``, ``--worker_resource_request``,
  ``--worker_resource_limit``, ``--worker_pod_priority``, ``--volume``, ``--envs``, ``--image_pull_policy``,
  ``--restart_policy``, ``--job_command``, ``--training_data``, ``--minibatch_size``, ``--num_minibatches_per_task``,
  ``--num_epochs``, ``--port``, ``--log_level``, ``--relaunch_on_worker_failure``, ``--relaunch_timeout_worker``) plus
  ``--records_per_task`` (ElasticDL before 0.1; it wins over minibatch size × minibatches per task).
* The seed's names are aliases: ``--num_epoch``, ``--batch_size``, ``--data``. ``--max_workers`` bounds the worker
  count set at run time.
* Every other flag (``--model_zoo``, ``--model_def``, ``--num_ps_pods``, ...) is accepted and ignored, as ElasticDL's
  own ``parse_known_args`` does; ``Config.ignored`` names them for one log line.
* This master's own settings: ``--kubeconfig``, ``--master`` (API server URL), ``--host`` (worker API address),
  ``--worker_progress_timeout``, ``--relaunch_backoff_base``/``--relaunch_backoff_max``, ``--max_task_retries``,
  ``--status_interval``, ``--worker_exit_grace``, ``--cleanup_timeout``, ``--log_format``.

A bad value raises ``ConfigError`` naming the flag (the command exits 2).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from .pods import parse_envs, parse_resources, parse_volumes, slot_priority

__all__ = ["Config", "ConfigError", "parse_args"]

# ElasticDL's relaunch timeout threshold (task_manager._TASK_TIMEOUT_THRESHOLD_SECS)
DEFAULT_PROGRESS_TIMEOUT = 300.0
_LOCAL_ONLY = {"--kubeconfig", "--master", "--host", "--log_format"}  # not passed on to workers


class ConfigError(ValueError):
    def __init__(self, flag: str, message: str) -> None:
        self.flag = flag
        super().__init__(f"--{flag}: {message}")


@dataclass
class Config:
    job_name: str
    namespace: str
    training_data: str
    records_per_task: int
    num_epochs: int
    num_workers: int
    max_workers: int
    worker_image: str
    worker_resource_request: str
    worker_resource_limit: str
    worker_pod_priority: str
    volume: str
    envs: str
    image_pull_policy: str
    restart_policy: str
    job_command: str
    relaunch_on_worker_failure: int
    worker_progress_timeout: float  # 0: never remove a worker for making no progress
    relaunch_backoff_base: float
    relaunch_backoff_max: float
    max_task_retries: int
    kubeconfig: str | None = None
    master: str | None = None
    host: str = "0.0.0.0"
    port: int = 50001
    status_interval: float = 5.0
    cleanup_timeout: float = 30.0
    worker_exit_grace: float = 10.0
    log_level: str = "INFO"
    log_format: str = ""
    worker_flags: list[str] = field(default_factory=list)  # the flags passed on to the ElasticDL worker command
    ignored: list[str] = field(default_factory=list)


def _bool(text: str) -> bool:
    return text.lower() in ("true", "yes", "t", "y")


def _add_bool(p: argparse.ArgumentParser, name: str, default: bool) -> None:
    """ElasticDL's ``add_bool_param``: ``--flag`` alone flips the default; ``--flag true|false`` sets it."""
    p.add_argument(name, nargs="?", const=not default, default=default, type=_bool)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m examples.elasticdl_master", allow_abbrev=False,
                                description="ElasticDL master: worker manager, event listener, task dispatcher.")
    p.add_argument("--job_name", required=True)
    p.add_argument("--namespace", default="default")
    p.add_argument("--training_data", "--data", default="")
    p.add_argument("--minibatch_size", "--batch_size", type=int, default=64)
    p.add_argument("--num_minibatches_per_task", type=int, default=8)
    p.add_argument("--records_per_task", type=int, default=0)
    p.add_argument("--num_epochs", "--num_epoch", type=int, default=1)
    p.add_argument("--num_workers", type=int, default=2)
    p.add_argument("--max_workers", type=int, default=0, help="upper bound of the worker count (default: 256)")
    p.add_argument("--image_name", default="")
    p.add_argument("--worker_image", default="")
    p.add_argument("--worker_resource_request", default="cpu=1,memory=4096Mi")
    p.add_argument("--worker_resource_limit", default="")
    p.add_argument("--worker_pod_priority", default="")
    p.add_argument("--volume", default="")
    p.add_argument("--envs", default="")
    p.add_argument("--image_pull_policy", default="Always", choices=["Never", "IfNotPresent", "Always"])
    p.add_argument("--restart_policy", default="Never", choices=["Never", "OnFailure", "Always"])
    p.add_argument("--job_command", default="")
    p.add_argument("--port", type=int, default=50001)
    p.add_argument("--log_level", type=str.upper, default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"])
    p.add_argument("--relaunch_on_worker_failure", type=int, default=1)
    _add_bool(p, "--relaunch_timeout_worker", False)
    p.add_argument("--worker_progress_timeout", type=float, default=0.0)
    p.add_argument("--relaunch_backoff_base", type=float, default=1.0)
    p.add_argument("--relaunch_backoff_max", type=float, default=300.0)
    p.add_argument("--max_task_retries", type=int, default=3)
    p.add_argument("--kubeconfig", default=None)
    p.add_argument("--master", default=None)
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--status_interval", type=float, default=5.0)
    p.add_argument("--cleanup_timeout", type=float, default=30.0)
    p.add_argument("--worker_exit_grace", type=float, default=10.0)
    p.add_argument("--log_format", default="", choices=["", "json", "console"])
    return p


def _check(ok: bool, flag: str, message: str) -> None:
    if not ok:
        raise ConfigError(flag, message)


def _flag_names(tokens: Sequence[str]) -> list[str]:
    return [t.split("=", 1)[0] for t in tokens if t.startswith("--")]


def _without_local_flags(argv: Sequence[str]) -> list[str]:
    out: list[str] = []
    skip_value = False
    for token in argv:
        if skip_value:
            skip_value = False
        elif token.split("=", 1)[0] in _LOCAL_ONLY:
            skip_value = "=" not in token
        else:
            out.append(token)
    return out


def parse_args(argv: Sequence[str]) -> Config:
    """Parse and check the master's flags; argparse's own errors (a missing ``--job_name``, a bad number) exit 2."""
    ns, unknown = _parser().parse_known_args(list(argv))
    _check(ns.num_workers >= 0, "num_workers", f"must not be negative, got {ns.num_workers}")
    max_workers = ns.max_workers or max(256, ns.num_workers)
    _check(max_workers >= ns.num_workers, "max_workers", f"{max_workers} is below --num_workers {ns.num_workers}")
    _check(bool(ns.training_data), "training_data", "is required (a file or a directory of text/CSV files)")
    _check(ns.minibatch_size > 0, "minibatch_size", f"must be positive, got {ns.minibatch_size}")
    _check(ns.num_minibatches_per_task > 0, "num_minibatches_per_task", f"must be positive, got {ns.num_minibatches_per_task}")
    _check(ns.records_per_task >= 0, "records_per_task", f"must not be negative, got {ns.records_per_task}")
    image = ns.worker_image or ns.image_name
    _check(bool(image), "worker_image", "is required (or --image_name)")
    _check(0 <= ns.port <= 65535, "port", f"must be 0..65535, got {ns.port}")
    _check(ns.max_task_retries >= 1, "max_task_retries", f"must be at least 1, got {ns.max_task_retries}")
    _check(ns.worker_progress_timeout >= 0, "worker_progress_timeout", "must not be negative")
    _check(0 < ns.relaunch_backoff_base <= ns.relaunch_backoff_max, "relaunch_backoff_base",
           f"must be positive and at most --relaunch_backoff_max ({ns.relaunch_backoff_max})")
    _check(ns.status_interval > 0, "status_interval", "must be positive")
    _check(ns.cleanup_timeout >= 0, "cleanup_timeout", "must not be negative")
    _check(ns.worker_exit_grace >= 0, "worker_exit_grace", "must not be negative")
    for flag in ("worker_resource_request", "worker_resource_limit"):
        try:
            parse_resources(getattr(ns, flag))
        except ValueError as exc:
            raise ConfigError(flag, str(exc)) from None
    try:
        parse_volumes(ns.volume, "check")
    except ValueError as exc:
        raise ConfigError("volume", str(exc)) from None
    try:
        slot_priority(ns.worker_pod_priority, 0, max(ns.num_workers, 1))
    except ValueError:
        raise ConfigError("worker_pod_priority", f"{ns.worker_pod_priority!r}: the fraction is not a number") from None
    _check(not ns.envs or bool(parse_envs(ns.envs)), "envs", f"{ns.envs!r} is not of the form k1=v1,k2=v2")
    timeout = ns.worker_progress_timeout or (DEFAULT_PROGRESS_TIMEOUT if ns.relaunch_timeout_worker else 0.0)
    return Config(
        job_name=ns.job_name, namespace=ns.namespace, training_data=ns.training_data,
        records_per_task=ns.records_per_task or ns.minibatch_size * ns.num_minibatches_per_task,
        num_epochs=ns.num_epochs, num_workers=ns.num_workers, max_workers=max_workers, worker_image=image,
        worker_resource_request=ns.worker_resource_request, worker_resource_limit=ns.worker_resource_limit,
        worker_pod_priority=ns.worker_pod_priority, volume=ns.volume, envs=ns.envs,
        image_pull_policy=ns.image_pull_policy, restart_policy=ns.restart_policy, job_command=ns.job_command,
        relaunch_on_worker_failure=ns.relaunch_on_worker_failure, worker_progress_timeout=timeout,
        relaunch_backoff_base=ns.relaunch_backoff_base, relaunch_backoff_max=ns.relaunch_backoff_max,
        max_task_retries=ns.max_task_retries, kubeconfig=ns.kubeconfig, master=ns.master, host=ns.host,
        port=ns.port, status_interval=ns.status_interval, cleanup_timeout=ns.cleanup_timeout,
        worker_exit_grace=ns.worker_exit_grace,
        log_level=ns.log_level, log_format=ns.log_format, worker_flags=_without_local_flags(argv), ignored=_flag_names(unknown),
    )
