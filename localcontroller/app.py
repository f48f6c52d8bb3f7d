"""``sedna-lc``: wiring of the LocalController.

settings → logging → database → managers → resume every stored object (at once, without waiting for the GM) →
probe server → worker API server → GM client. SIGTERM/SIGINT stop it with exit 0. Exit codes: 0 clean stop, 1 runtime failure
(cannot bind), 2 bad setting (named in the message).
"""

from __future__ import annotations

import os
import sqlite3
import ssl
import sys
import threading
from collections.abc import Sequence

import structlog
from prometheus_client import CollectorRegistry

from apis.edge import Frame
from apis.signals import stop_event_on_signals
from apis.tokenfile import TokenFile
from localcontroller import __version__
from localcontroller.config import DB_UNDER_ROOTFS, LCConfig, SettingError, load_settings
from localcontroller.delivery import WorkerReports
from localcontroller.downstream import Downstream
from localcontroller.gmclient import GMClient
from localcontroller.logging import configure_logging
from localcontroller.managers import ManagerContext
from localcontroller.managers.registry import MANAGERS
from localcontroller.metrics import LCMetrics
from localcontroller.server import LCServer
from localcontroller.store import Store
from reconcile.probes import ProbeServer

__all__ = ["LocalController", "main"]

log = structlog.get_logger("sedna-lc")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_CONFIG = 2


class LocalController:
    """One sedna-lc process; raises ``SettingError`` when the database or the CA file cannot be used."""

    def __init__(self, cfg: LCConfig, registry: CollectorRegistry | None = None) -> None:
        self.cfg = cfg
        try:
            default_db = os.path.abspath(os.path.join(cfg.rootfs, DB_UNDER_ROOTFS))
            self.store = Store(cfg.db_path, private_dir=os.path.abspath(cfg.db_path) == default_db)
        except (sqlite3.Error, OSError) as exc:
            raise SettingError("--db", f"cannot open {cfg.db_path!r}: {exc}") from None
        self.registry = registry if registry is not None else CollectorRegistry()
        self.metrics = LCMetrics(self.registry, self.store.pending_reports, lambda: self.store.pending_usage()[0])
        context = None
        if cfg.gm_url.startswith("wss://"):
            try:
                context = ssl.create_default_context(cafile=cfg.gm_ca_file or None)
            except (ssl.SSLError, OSError) as exc:
                raise SettingError("--gm-ca-file", f"cannot load {cfg.gm_ca_file!r}: {exc}") from None
            if cfg.cert_file:
                try:
                    context.load_cert_chain(cfg.cert_file, cfg.key_file)
                except (ssl.SSLError, OSError) as exc:
                    raise SettingError("--cert-file", f"cannot load {cfg.cert_file!r} with its key: {exc}") from None
        token: str | TokenFile = cfg.token
        if cfg.token_file:
            try:
                token = TokenFile(cfg.token_file)
            except (OSError, ValueError) as exc:
                raise SettingError("--token-file", f"cannot read {cfg.token_file!r}: {exc}") from None
        self.client = GMClient(
            cfg.gm_url, cfg.node_name, self.store, self._on_frame, self._on_resync, token=token,
            ssl_context=context, on_connection_change=self._on_connection_change,
        )
        self.ctx = ManagerContext(cfg, self.store, self.client.report)
        for kind, factory in MANAGERS.items():
            self.ctx.managers[kind] = factory(self.ctx)
        self.reports = WorkerReports(
            self.store, self.ctx.managers,
            dropped=lambda reason, count: self.metrics.kept_worker_reports_dropped.labels(reason).inc(count))
        self.downstream = Downstream(self.store, self.ctx.managers, arrivals=self.reports)
        self.server = LCServer(cfg.bind_host, cfg.bind_port, self.metrics, self.reports.deliver,
                               self.client.connected.is_set)
        # the kubelet's probes, on their own listener: no load on the worker API delays them
        self.probes = ProbeServer(_address(cfg.health_probe_host, cfg.health_probe_port), self.server.checks)

    def _on_connection_change(self, up: bool) -> None:
        self.metrics.gm_connected.set(1 if up else 0)
        self.reports.gm_connection(up)

    def _on_frame(self, frame: Frame) -> None:
        self.downstream.handle(frame)

    def _on_resync(self, body: object) -> None:
        self.downstream.resync(body)

    def run(self, stop: threading.Event) -> int:
        # the stored objects are back in their managers before the worker API answers: a report that arrives at
        # once is about an object its manager already holds
        resumed = self.downstream.resume()
        self.reports.expire()
        self.downstream.start()
        for manager in self.ctx.managers.values():
            manager.start(stop)
        cfg = self.cfg
        for what, server, address in (
                ("health probe", self.probes, _address(cfg.health_probe_host, cfg.health_probe_port)),
                ("worker API", self.server, _address(cfg.bind_host, cfg.bind_port))):
            try:
                server.start()
            except OSError as exc:
                log.error(f"cannot start the {what} server", address=address, error=str(exc))
                self.probes.stop()
                self.downstream.stop()
                return EXIT_FAILURE
        self.client.start(stop)
        log.info("sedna-lc started", version=__version__, gm=self.cfg.gm_url, rootfs=self.cfg.rootfs,
                 db=self.cfg.db_path, worker_api=self.server.url, probes=self.probes.url, resumed=resumed,
                 pending_reports=self.store.pending_reports(), kept_worker_reports=self.store.pending_usage()[0],
                 managers=sorted(self.ctx.managers))
        try:
            stop.wait()
        finally:
            self.client.join(5)
            self.downstream.stop()
            self.server.stop()
            self.probes.stop()
            self.store.close()
            log.info("sedna-lc stopped")
        return EXIT_OK


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``sedna-lc``."""
    try:
        cfg, version = load_settings(argv)
    except SettingError as exc:
        print(f"sedna-lc: invalid setting {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if version:
        print(f"sedna-lc {__version__}")
        return EXIT_OK
    configure_logging(cfg.node_name, cfg.log_level, cfg.log_format)
    try:
        lc = LocalController(cfg)
    except SettingError as exc:
        print(f"sedna-lc: invalid setting {exc}", file=sys.stderr)
        return EXIT_CONFIG
    stop = threading.Event()
    stop_event_on_signals(stop, log).install()  # for the process's lifetime (apis.signals)
    return lc.run(stop)


if __name__ == "__main__":
    sys.exit(main())
