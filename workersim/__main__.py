"""``python -m workersim``: run the worker simulator against an API server until SIGTERM/SIGINT.

Exit codes: 0 after SIGTERM/SIGINT, 2 for a bad flag (named in the message). Logs: JSON lines on stderr; the line
``worker simulator ready`` once the first pod list is in.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from apis.logs import configure_process_logging, get_logger
from apis.signals import stop_event_on_signals
from informers import wait_for_cache_sync

from .lcclient import LCClient
from .sdkmode import sdk_runner
from .simulator import WorkerSimulator

__all__ = ["main"]

log = get_logger("workersim.main")

_NODE_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m workersim",
                                description="Plays Sedna's worker SDK inside the sandbox's worker pods")
    p.add_argument("--kubeconfig", required=True, metavar="FILE", help="kubeconfig of the API server")
    p.add_argument("--namespace", default="", help="watch only this namespace (default: all)")
    p.add_argument("--lc", action="append", default=[], metavar="NODE=URL",
                   help="the LC worker API of a node, e.g. edge-1=http://127.0.0.1:9100 (repeatable)")
    p.add_argument("--default-lc", metavar="URL", help="LC for nodes without --lc (default: the pod's LC_SERVER)")
    p.add_argument("--rootfs", action="append", default=[], metavar="NODE=DIR",
                   help="the node's filesystem root, as its sedna-lc --rootfs (repeatable)")
    p.add_argument("--default-rootfs", metavar="DIR", help="rootfs of nodes without --rootfs (default: none)")
    p.add_argument("--report-attempts", type=int, default=5, metavar="N", help="tries per report (SDK: 5)")
    p.add_argument("--report-retry-seconds", type=float, default=3.0, metavar="S", help="between tries (SDK: 3)")
    p.add_argument("--report-timeout-seconds", type=float, default=None, metavar="S",
                   help="per HTTP request (SDK: none, the default)")
    p.add_argument("--sdk-dir", metavar="DIR",
                   help="run Sedna's real SDK (DIR/lib/sedna) in each worker pod it has a driver for")
    p.add_argument("--sdk-python", metavar="PY", help="the interpreter that runs the SDK (with --sdk-dir)")
    p.add_argument("--pod-logs-dir", metavar="DIR",
                   help="append each worker's own lines to DIR/<namespace>/<pod>.log (what kubectl logs shows)")
    p.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-format", default="json", choices=["json", "console"])
    return p


def _url(p: argparse.ArgumentParser, flag: str, value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        p.error(f"invalid setting {flag}: {value!r} is not an http(s)://host:port URL")
    return value


def _directory(p: argparse.ArgumentParser, flag: str, value: str) -> str:
    if not os.path.isdir(value):
        p.error(f"invalid setting {flag}: {value!r} is not a directory")
    return value


def _node_map(p: argparse.ArgumentParser, flag: str, items: list[str],
              check: Callable[[argparse.ArgumentParser, str, str], str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        node, sep, value = item.partition("=")
        if not sep or not _NODE_NAME.fullmatch(node) or len(node) > 253:
            p.error(f"invalid setting {flag}: {item!r} is not NODE=VALUE with a DNS-1123 node name")
        out[node] = check(p, flag, value)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    lc_urls = _node_map(p, "--lc", args.lc, _url)
    rootfs = _node_map(p, "--rootfs", args.rootfs, _directory)
    default_lc = _url(p, "--default-lc", args.default_lc) if args.default_lc else None
    default_rootfs = _directory(p, "--default-rootfs", args.default_rootfs) if args.default_rootfs else None
    if args.report_attempts < 1 or args.report_retry_seconds < 0 or (
            args.report_timeout_seconds is not None and args.report_timeout_seconds <= 0):
        p.error("invalid setting --report-*: attempts must be ≥ 1, retry seconds ≥ 0, timeout seconds > 0")
    sdk = None
    if bool(args.sdk_dir) != bool(args.sdk_python):
        p.error("invalid setting --sdk-dir/--sdk-python: give both or neither")
    if args.sdk_dir:
        try:
            sdk = sdk_runner(args.sdk_dir, args.sdk_python)
        except ValueError as exc:
            p.error(f"invalid setting --sdk-dir/--sdk-python: {exc}")
    if args.pod_logs_dir:
        try:
            os.makedirs(args.pod_logs_dir, exist_ok=True)
        except OSError as exc:
            p.error(f"invalid setting --pod-logs-dir: {exc}")
    if not os.path.isfile(args.kubeconfig):
        p.error(f"invalid setting --kubeconfig: {args.kubeconfig!r} is not a file")
    configure_process_logging(args.log_level, args.log_format, component="workersim")

    from apis.clientset import Clientset  # the real clientset pulls in the kubernetes package

    try:
        clientset = Clientset.from_kubeconfig(args.kubeconfig)
    except Exception as exc:  # the kubernetes package raises its own types for a bad kubeconfig
        print(f"python -m workersim: invalid setting --kubeconfig: {exc}", file=sys.stderr, flush=True)
        return 2
    done = threading.Event()
    stop_event_on_signals(done).install()  # for the process's lifetime (apis.signals)
    simulator = WorkerSimulator(
        clientset, lc_urls=lc_urls, default_lc=default_lc, rootfs=rootfs, default_rootfs=default_rootfs,
        namespace=args.namespace,
        lc_client=LCClient(args.report_attempts, args.report_retry_seconds, args.report_timeout_seconds),
        sdk=sdk, pod_logs_dir=args.pod_logs_dir,
    ).start()
    try:
        if not wait_for_cache_sync(done, simulator.has_synced):
            return 0
        log.info("worker simulator ready", lcs=lc_urls, default_lc=default_lc, rootfs=rootfs,
                 default_rootfs=default_rootfs, namespace=args.namespace or "(all)")
        done.wait()
        log.info("worker simulator stopping")
    finally:
        simulator.stop()
        clientset.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
