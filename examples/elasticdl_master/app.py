"""Command line entry point: ``python -m examples.elasticdl_master --job_name mnist --training_data /data ...``.

Logs are structlog lines on stderr (``apis.logs.configure_process_logging``: JSON, or key=value with
``--log_format console``; console by default on a TTY), every one of the master's with the ``job`` key. Exit codes:
0 the data is consumed, 1 the job did not succeed (see ``Master``), 2 a bad flag, unusable training data, a
kubeconfig that cannot be loaded, or a port that is taken.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence

import structlog

from apis.clientset import Clientset
from apis.clientset import ConfigError as KubeConfigError
from apis.logs import configure_process_logging
from apis.signals import stop_event_on_signals

from .args import ConfigError, parse_args
from .data import DataError
from .master import Master

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        config = parse_args(argv)
    except ConfigError as exc:
        print(f"elasticdl master: {exc}", file=sys.stderr)
        return 2
    configure_process_logging(config.log_level, config.log_format, component="elasticdl_master")
    log = structlog.get_logger("elasticdl_master").bind(job=config.job_name)
    if config.ignored:
        log.info("ignoring flags this master does not use", flags=config.ignored)
    try:
        clientset = Clientset.auto(kubeconfig=config.kubeconfig, master=config.master)
    except KubeConfigError as exc:
        log.error("cannot load the cluster configuration", error=str(exc), kubeconfig=config.kubeconfig)
        return 2
    try:
        master = Master(config, clientset)
    except DataError as exc:
        log.error("--training_data cannot be used", error=str(exc))
        clientset.close()
        return 2
    stop = threading.Event()
    stop_event_on_signals(stop).install()  # for the process's lifetime; the master logs why it stopped
    try:
        return master.run(stop)
    except OSError as exc:
        log.error("cannot serve the worker API", error=str(exc), host=config.host, port=config.port)
        return 2
    finally:
        clientset.close()
