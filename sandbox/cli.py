"""The sandbox API server's command line (``python -m sandbox``, also ``python -m apis.fake.apiserver``): run it until
SIGTERM/SIGINT (flags in docs/sandbox.md)."""

from __future__ import annotations

import argparse
import gc
import sys
import threading
from collections.abc import Sequence

from apis.errors import ApiError
from apis.fake.tracker.validation import is_dns1123_subdomain
from apis.logs import LOG_FORMATS, configure_process_logging
from apis.signals import stop_event_on_signals
from sandbox.apiserver.server import SandboxAPIServer
from sandbox.faults import Faults
from sandbox.steering import MAX_STEERING_SECONDS

__all__ = ["DEFAULT_POD_START_DELAY", "main"]

DEFAULT_POD_START_DELAY = 1.0  # a kubelet takes a second or more to start a pod's containers

# The stored objects are acyclic JSON trees that reference counting frees; with the default thresholds the cyclic GC
# walks the whole store again and again as it grows (6% of the process's CPU at 10,000 jobs). The same thresholds
# as sedna-gm's (informers.gc_policy.CONTROLLER_GC_THRESHOLDS), and the start-up heap (CRDs, schemas) frozen.
SERVER_GC_THRESHOLDS = (50_000, 20, 100)


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m sandbox", description="Sandbox Kubernetes API server")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (printed)")
    p.add_argument("--crds", action="append", default=[], metavar="DIR", help="load every CRD in DIR (repeatable)")
    p.add_argument("--kubeconfig-out", metavar="FILE", help="write a kubeconfig for this server to FILE")
    p.add_argument("--no-kubelet", action="store_true", help="do not run the pod-lifecycle simulator")
    p.add_argument(
        "--namespace-lifecycle",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="objects only in namespaces that exist, as kube-apiserver's NamespaceLifecycle admission (default on; "
        "--no-namespace-lifecycle: lenient mode)",
    )
    p.add_argument("--rbac", action="store_true",
                   help="authenticate bearer tokens (the kubeconfig's admin token, ServiceAccount tokens from the "
                        "TokenRequest API) and authorize with the stored Roles/ClusterRoles and bindings")
    p.add_argument("--strict-nodes", action="store_true",
                   help="only the --node nodes exist; a pod bound to another stays Pending (default: registered)")
    p.add_argument("--node", "--nodes", dest="node", action="append", default=[], metavar="NAME",
                   help="register node NAME, Ready (repeatable; NAME may be a comma-separated list)")
    p.add_argument("--pod-start-delay", type=float, default=DEFAULT_POD_START_DELAY, metavar="SECONDS",
                   help="seconds a pod stays Pending (ContainerCreating) before it runs, as a kubelet takes to start "
                        f"its containers (default {DEFAULT_POD_START_DELAY:g}; 0: at once)")
    p.add_argument("--pod-logs-dir", metavar="DIR", help="serve pods/log from DIR/<namespace>/<pod>.log")
    p.add_argument("--watch-history", type=int, default=1000, metavar="N", help="replayable watch events (1000)")
    p.add_argument(
        "--event-ttl", type=float, default=3600.0, metavar="SECONDS",
        help="delete Events SECONDS after their last write, as kube-apiserver's --event-ttl (3600; 0: never)",
    )
    p.add_argument("--fault-drop-watch-after", type=float, metavar="SECONDS", help="end every watch after SECONDS")
    p.add_argument("--fault-drop-watch-after-events", type=int, metavar="N", help="end every watch after N events")
    p.add_argument("--fault-error-rate", type=float, default=0.0, metavar="FRACTION", help="answer 429/500 at this rate")
    p.add_argument("--fault-gone-on-rewatch", action="store_true", help="answer 410 to watches from a resourceVersion")
    p.add_argument("--fault-latency-ms", type=float, default=0.0, metavar="MS", help="delay every request by MS")
    p.add_argument("--seed", type=int, default=None, metavar="N", help="seed of the fault generator")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="", choices=LOG_FORMATS,
                   help="json or console (key=value) lines on stderr (default: console on a terminal, else json)")
    args = p.parse_args(argv)
    args.node = [name.strip() for value in args.node for name in value.split(",") if name.strip()]
    for name in args.node:
        problems = is_dns1123_subdomain(name)
        if problems:
            p.error(f"--node {name!r} is not a valid node name: {problems[0]}")
    if not 0 <= args.pod_start_delay <= MAX_STEERING_SECONDS:  # NaN fails too
        p.error(f"--pod-start-delay must be between 0 and {MAX_STEERING_SECONDS:.0f} seconds")
    if args.watch_history <= 0:
        p.error("--watch-history must be a positive integer")
    if not 0 <= args.event_ttl < float("inf"):  # NaN fails too
        p.error("--event-ttl must be a non-negative number of seconds")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run the sandbox until SIGTERM/SIGINT; exit status 0 on a clean shutdown, 2 on bad flags or CRDs."""
    args = _parse_args(argv)
    configure_process_logging(args.log_level, args.log_format, component="sandbox-apiserver")
    try:
        faults = Faults(
            drop_watch_after=args.fault_drop_watch_after,
            drop_watch_after_events=args.fault_drop_watch_after_events,
            error_rate=args.fault_error_rate,
            gone_on_rewatch=args.fault_gone_on_rewatch,
            latency_ms=args.fault_latency_ms,
            seed=args.seed,
        )
        server = SandboxAPIServer(
            host=args.host,
            port=args.port,
            crd_dirs=args.crds,
            kubelet=not args.no_kubelet,
            namespace_lifecycle=args.namespace_lifecycle,
            faults=faults,
            watch_history=args.watch_history,
            event_ttl=args.event_ttl,
            rbac=args.rbac,
            strict_nodes=args.strict_nodes,
            nodes=args.node,
            pod_start_delay=args.pod_start_delay,
            pod_logs_dir=args.pod_logs_dir,
        )
        server.start()
        gc.set_threshold(*SERVER_GC_THRESHOLDS)
        gc.collect()
        gc.freeze()
    except (ValueError, ApiError, OSError) as exc:
        print(f"sandbox API server: {exc}", file=sys.stderr, flush=True)
        return 2
    done = threading.Event()
    stop_event_on_signals(done).install()  # for the process's lifetime (apis.signals)
    try:
        if args.kubeconfig_out:
            server.write_kubeconfig(args.kubeconfig_out)
        print(f"listening on {server.url}", flush=True)
        done.wait()
    finally:
        server.stop()
    return 0


