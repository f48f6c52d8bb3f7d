"""``sedna-gm``: wiring of the GlobalManager.

config → logging → clientset → metrics/health server → (leader election →) informer factory + controllers.
SIGTERM/SIGINT (handled from before the clientset is built, so a signal during start-up is a clean stop too): stop
taking work, drain in-flight syncs (bounded by ``shutdownTimeoutSeconds``), release the lease, exit 0. A second
SIGTERM/SIGINT while draining exits at once with 1. Exit codes: 0 clean stop, 1 runtime failure (lost leadership,
cannot bind) or forced exit, 2 configuration error.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import random
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

import structlog
from prometheus_client import REGISTRY, CollectorRegistry

from apis.signals import SignalWatcher
from globalmanager import __version__
from globalmanager.config import LOG_LEVELS, ConfigError, GMConfig, load_config, parse_address
from globalmanager.logging import configure_logging
from informers.gc_policy import tune_gc_for_controllers

__all__ = ["GlobalManager", "build_parser", "config_from_args", "main", "resync_period"]

log = structlog.get_logger("sedna-gm")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_CONFIG = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sedna-gm",
        description="Sedna GlobalManager: runs the Sedna and ElasticDL controllers. Flags override the config file.",
        epilog="SIGTERM/SIGINT drain in-flight work and exit 0; a second signal exits at once with 1. "
        "Exit 2 means a configuration error.",
    )
    p.add_argument("--config", help="YAML config file (Sedna's fields plus metricsAddress, leaderElection, ...)")
    p.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then $KUBECONFIG)")
    p.add_argument("--master", help="API server address; overrides the kubeconfig's")
    p.add_argument("--namespace", help="watch only this namespace (default: all)")
    p.add_argument("--metrics-address", help="host:port of /metrics, /healthz, /readyz (default :8080; port 0: a free "
                                             "one, announced in the log)")
    p.add_argument("--health-probe-address",
                   help="host:port of the kubelet's probes /healthz, /livez, /readyz, on a listener of their own "
                        "(default :8081)")
    p.add_argument("--websocket-address",
                   help="host:port of the edge link LocalControllers connect to (default 0.0.0.0:9000)")
    p.add_argument("--log-level", choices=LOG_LEVELS)
    p.add_argument("--log-format", choices=("json", "console"))
    p.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=None,
                   help="run the controllers only while holding the leader lease (default on)")
    p.add_argument("--leader-elect-identity", help="identity in the lease (default hostname_uuid)")
    p.add_argument("-v", "--v", type=int, default=None, dest="verbosity", help="klog-style verbosity; >= 4 means debug")
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def config_from_args(argv: Sequence[str] | None) -> tuple[GMConfig, argparse.Namespace]:
    """Parse flags, load ``--config``, lay the flags over it and validate; raises ``ConfigError``."""
    from globalmanager.controllers import registered

    args = build_parser().parse_args(argv)
    if args.version:
        return GMConfig(), args
    cfg = load_config(args.config)
    for attr, value in (
        ("kube_config", args.kubeconfig),
        ("master", args.master),
        ("namespace", args.namespace),
        ("metrics_address", args.metrics_address),
        ("health_probe_address", args.health_probe_address),
        ("log_level", args.log_level),
        ("log_format", args.log_format),
    ):
        if value is not None:
            setattr(cfg, attr, value)
    if args.websocket_address is not None:
        try:
            cfg.websocket.address, cfg.websocket.port = parse_address(args.websocket_address)
        except ValueError as exc:
            raise ConfigError("--websocket-address", str(exc)) from None
    if args.verbosity is not None and args.log_level is None and args.verbosity >= 4:
        cfg.log_level = "debug"
    if args.leader_elect is not None:
        cfg.leader_election.enabled = args.leader_elect
    if args.leader_elect_identity:
        cfg.leader_election.identity = args.leader_elect_identity
    cfg.validate(known_controllers=registered())
    return cfg, args


def resync_period(min_seconds: float, rng: Any = random) -> float:
    """A resync period in ``[min, 2·min)``, like Sedna's ``ResyncPeriod`` (``min · (1 + rand.Float64())``)."""
    value = min_seconds * (1.0 + rng.random())
    return value if value < 2 * min_seconds else math.nextafter(2 * min_seconds, 0.0)


# Keep-alive connections kept for reuse: one per informer's watch (about 20 resources with every controller), the
# initial lists all at once, the controllers' workers (up to maxWorkers each under a backlog) and the edge reports'
# writers. Beyond it connections are still opened but closed after use (urllib3 warns "Connection pool is full").
CONNECTION_POOL_SIZE = 128


def build_clientset(cfg: GMConfig) -> Any:
    from apis.clientset import Clientset
    from apis.clientset import ConfigError as ClientConfigError

    try:
        if cfg.kube_config or cfg.master:
            return Clientset.from_kubeconfig(cfg.kube_config or None, master=cfg.master or None,
                                             pool_maxsize=CONNECTION_POOL_SIZE)
        return Clientset.auto(pool_maxsize=CONNECTION_POOL_SIZE)
    except ClientConfigError as exc:
        raise ConfigError("kubeConfig", str(exc)) from None
    except ValueError as exc:  # e.g. a kubeconfig whose server is not a URL
        raise ConfigError("master" if cfg.master else "kubeConfig", str(exc)) from None


class GlobalManager:
    """One sedna-gm process. ``run()`` blocks until ``stop()`` (or lost leadership) and returns the exit code."""

    def __init__(
        self, cfg: GMConfig, clientset: Any = None, registry: CollectorRegistry | None = None, rng: Any = random
    ) -> None:
        self.cfg = cfg
        self.rng = rng
        self.clientset = clientset if clientset is not None else build_clientset(cfg)
        self.registry = REGISTRY if registry is None else registry
        self.stop_event = threading.Event()
        self.exit_code = EXIT_OK
        self.controllers: list[Any] = []
        self.elector: Any = None
        self.server: Any = None  # /metrics (and the probes, for deployments that probe the metrics port)
        self.probe_server: Any = None  # the probes on a listener of their own
        self.edge_server: Any = None  # the websocket server LCs connect to (leader only)
        self._controllers_started = threading.Event()
        self._lock = threading.Lock()

    # -- probes ---------------------------------------------------------------------------------------------------
    def _ready(self) -> tuple[bool, str]:
        if self.stop_event.is_set():
            return False, "shutting down"
        if self.elector is not None and not self.elector.leading:
            healthy, why = self.elector.lease_round_status()
            if not healthy:  # a replica that cannot reach or write its lease would never take over
                le = self.cfg.leader_election
                return False, f"lease {le.namespace}/{le.lease_name}: {why}"
            leader = self.elector.get_leader()
            return True, f"standing by (leader: {leader or 'none'})"
        if not self._controllers_started.is_set():
            return False, "controllers not started"
        pending = [c.name for c in self.controllers if not c.synced.is_set()]
        if pending:
            return False, f"caches not synced: {', '.join(pending)}"
        return True, ""

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def stop(self) -> None:
        self.stop_event.set()

    def run(self) -> int:
        from globalmanager.server import OperabilityServer
        from reconcile.probes import HealthChecks, ProbeServer
        from workqueue import set_provider
        from workqueue.prometheus import PrometheusMetricsProvider

        set_provider(PrometheusMetricsProvider(self.registry))
        log.info("starting sedna-gm", version=__version__, config=dataclasses.asdict(self.cfg))
        checks = HealthChecks()
        checks.add_healthz_check("ping", lambda: (True, ""))
        checks.add_readyz_check("controllers", self._ready)
        self.server = OperabilityServer(self.cfg.metrics_address, self.registry, checks=checks)
        self.probe_server = ProbeServer(self.cfg.health_probe_address, checks)
        for what, server, address in (("metrics", self.server, self.cfg.metrics_address),
                                      ("health probe", self.probe_server, self.cfg.health_probe_address)):
            try:
                server.start()
            except OSError as exc:
                log.error(f"cannot start the {what} server", address=address, error=str(exc))
                self.server.stop()
                return EXIT_FAILURE
        try:
            if self.cfg.leader_election.enabled:
                self._run_with_leader_election()
            else:
                # daemon: a sync stuck past the bounded drain never keeps the process alive
                worker = threading.Thread(
                    target=self.run_controllers, args=(self.stop_event,), name="controllers", daemon=True
                )
                worker.start()
                self.stop_event.wait()
                worker.join(self.cfg.shutdown_timeout + 5)
        except Exception:
            log.exception("sedna-gm failed")
            self.exit_code = EXIT_FAILURE
        finally:
            self.probe_server.stop()
            self.server.stop()
            log.info("sedna-gm stopped", exit_code=self.exit_code)
        return self.exit_code

    def _run_with_leader_election(self) -> None:
        from globalmanager.leaderelection import LeaderCallbacks, LeaderElector

        le = self.cfg.leader_election

        def stopped_leading() -> None:
            if not self.stop_event.is_set():
                log.error("leader election lost; exiting")
                self.exit_code = EXIT_FAILURE
                self.stop_event.set()

        self.elector = LeaderElector(
            self.clientset,
            le.lease_name,
            le.namespace,
            LeaderCallbacks(on_started_leading=self.run_controllers, on_stopped_leading=stopped_leading),
            identity=le.identity or None,
            lease_duration=le.lease_duration,
            renew_deadline=le.renew_deadline,
            retry_period=le.retry_period,
            leader_stop_timeout=self.cfg.shutdown_timeout + 5,
        )
        log.info("leader election enabled", lease=f"{le.namespace}/{le.lease_name}", identity=self.elector.identity)
        self.elector.run(self.stop_event)
        # run() returns on stop (after releasing the lease) or on lost leadership
        self.stop_event.set()

    def run_controllers(self, stop: threading.Event) -> None:
        """Build the enabled controllers, start the informers and run the controllers until ``stop``."""
        from apis.record import EventRecorder
        from globalmanager.controllers import ControllerContext, select
        from globalmanager.messagelayer.layer import MessageLayer
        from globalmanager.runtime.cachetransform import strip_unread_fields
        from informers import SharedInformerFactory

        cfg = self.cfg
        resync = resync_period(cfg.min_resync_period_seconds, self.rng)
        factory = SharedInformerFactory(self.clientset, default_resync=resync, namespace=cfg.namespace,
                                        transform=strip_unread_fields)
        edge = MessageLayer(self.registry)
        ctx = ControllerContext(
            clientset=self.clientset,
            informer_factory=factory,
            recorder=EventRecorder(self.clientset, "sedna-gm"),
            registry=self.registry,
            workers=cfg.workers,
            default_workers=cfg.default_workers,
            drain_timeout=cfg.shutdown_timeout,
            config=cfg,
            edge=edge,
        )
        threads: list[threading.Thread] = []
        try:
            for name, factory_fn in select(cfg.controllers).items():
                controller = factory_fn(ctx)
                self.controllers.append(controller)
                log.info("controller enabled", controller=name, workers=ctx.workers_for(name))
            self._add_model_router(ctx)
            factory.start(stop)
            for controller in self.controllers:
                t = threading.Thread(
                    target=controller.run, args=(stop,), name=f"controller-{controller.name}", daemon=True
                )
                t.start()
                threads.append(t)
            self._controllers_started.set()
            self._serve_edge(edge, stop)
            stop.wait()
        except Exception:
            log.exception("controllers failed")
            self.exit_code = EXIT_FAILURE
            self.stop_event.set()
        finally:
            if self.edge_server is not None:
                self.edge_server.stop()
            edge.stop()
            for t in threads:  # each controller drains within shutdownTimeoutSeconds
                t.join(cfg.shutdown_timeout + 1)
            factory.shutdown(timeout=5.0)

    def _add_model_router(self, ctx: Any) -> None:
        """Run the Model controller that a job controller created to route its Models (``ctx.model_router``)
        when ``controllers`` does not list Model: without workers its queue would hold the routes and send
        nothing."""
        router = ctx.model_router
        if router is None or any(c is router for c in self.controllers):
            return
        self.controllers.append(router)
        log.info("controller enabled", controller=router.name,
                 reason="routes the Models of the enabled job controllers")

    def _serve_edge(self, edge: Any, stop: threading.Event) -> None:
        """Once every controller's caches synced (so that a node's full state and the routes of its reports are
        known), serve LCs; a listen error stops sedna-gm with exit 1, like Go Sedna's."""
        from globalmanager.messagelayer import edge_server_from_config

        while not stop.is_set() and not all(c.synced.is_set() for c in self.controllers):
            stop.wait(0.05)
        if stop.is_set():
            return
        ws = self.cfg.websocket
        edge.start()
        try:
            server = edge_server_from_config(edge, ws)
            server.start()
        except (OSError, ValueError) as exc:
            log.error("cannot start the edge server", address=f"{ws.address}:{ws.port}", error=str(exc))
            self.exit_code = EXIT_FAILURE
            self.stop_event.set()
            return
        self.edge_server = server


def main(argv: Sequence[str] | None = None) -> int:
    """Console script ``sedna-gm``."""
    try:
        cfg, args = config_from_args(argv)
    except ConfigError as exc:
        print(f"sedna-gm: invalid configuration: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    if args.version:
        print(f"sedna-gm {__version__}")
        return EXIT_OK
    configure_logging(cfg.log_level, cfg.log_format)
    stop_requested = threading.Event()
    running: list[GlobalManager] = []

    def on_signal(signum: signal.Signals, count: int) -> None:  # on the signal watcher's thread, not in a handler
        if count > 1:
            log.warning("second signal: exiting at once", signal=signum.name)
            os._exit(EXIT_FAILURE)
        log.info("signal received: shutting down", signal=signum.name)
        stop_requested.set()
        for gm in running:
            gm.stop()

    # installed before the (possibly slow) clientset set-up: a SIGTERM then must still be a clean stop, not a kill
    # kept for the process's lifetime once the GM runs: a signal during the last clean-up is still the watcher's
    watcher = SignalWatcher(on_signal).install()
    tune_gc_for_controllers()  # large informer caches: see informers.gc_policy
    try:
        gm = GlobalManager(cfg)
    except ConfigError as exc:
        watcher.close()  # nothing ran: the caller (a test calling main) gets its handlers back
        print(f"sedna-gm: invalid configuration: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    running.append(gm)
    if stop_requested.is_set():
        gm.stop()
    return gm.run()


if __name__ == "__main__":
    sys.exit(main())
