"""sedna-lc settings: each a flag, else Go Sedna's environment variable, else the default (docs/edge.md).

``load_settings(argv, environ)`` returns ``LCConfig``; a bad value raises ``SettingError`` naming the flag (and the
variable it may come from), which ``main`` turns into exit 2.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from apis.tokenfile import read_token

__all__ = ["LCConfig", "SettingError", "build_parser", "load_settings", "DEFAULT_BIND_PORT",
           "DEFAULT_HEALTH_PROBE_PORT"]

DEFAULT_BIND_PORT = 9100
DEFAULT_HEALTH_PROBE_PORT = 9101
DEFAULT_ROOTFS = "/rootfs"
DEFAULT_DATASET_CHECK_PERIOD = 60.0
DB_UNDER_ROOTFS = "var/lib/sedna/database.db"
LOG_LEVELS = ("debug", "info", "warning", "error")

_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


class SettingError(ValueError):
    """A bad setting; ``setting`` names it as the user gave it (``--node-name (NODENAME)``)."""

    def __init__(self, setting: str, message: str) -> None:
        super().__init__(f"{setting}: {message}")
        self.setting = setting
        self.message = message


@dataclass
class LCConfig:
    gm_url: str = ""  # ws://host:port/ or wss://host:port/
    node_name: str = ""
    rootfs: str = DEFAULT_ROOTFS
    bind_host: str = "0.0.0.0"
    bind_port: int = DEFAULT_BIND_PORT
    # the kubelet's probes on a listener of their own: no load on the worker API delays them
    health_probe_host: str = "0.0.0.0"
    health_probe_port: int = DEFAULT_HEALTH_PROBE_PORT
    db_path: str = ""
    token: str = ""  # read from --token-file at start
    token_file: str = ""  # --token-file: read again on each connection attempt (a rotated token is picked up)
    gm_ca_file: str = ""
    cert_file: str = ""  # --cert-file/--key-file: a client certificate naming this node (wss:// only)
    key_file: str = ""
    dataset_check_period: float = DEFAULT_DATASET_CHECK_PERIOD
    log_level: str = "info"
    log_format: str = ""  # "" = console on a TTY, else JSON


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="sedna-lc",
        description="Sedna LocalController: runs on an edge node, talks to sedna-gm over a websocket and serves the "
        "worker API. A flag overrides the environment variable named in its help.",
        epilog="Exit 2 means a bad setting (named in the message).",
    )
    p.add_argument("--gm-address", help="GM edge link: host:port, ws://host:port or wss://host:port (GM_ADDRESS)")
    p.add_argument("--node-name", help="this node's name (NODENAME, else HOSTNAME)")
    p.add_argument("--rootfs", help=f"where the host's / is mounted; local URLs are read below it "
                                    f"(ROOTFS_MOUNT_DIR, default {DEFAULT_ROOTFS})")
    p.add_argument("--bind-address", help=f"host:port of the worker API, /metrics and the probes "
                                          f"(BIND_PORT sets the port; default 0.0.0.0:{DEFAULT_BIND_PORT}; port 0: a "
                                          "free one, announced in the log)")
    p.add_argument("--health-probe-address",
                   help=f"host:port of the kubelet's probes /healthz, /livez, /readyz on a listener of their own "
                        f"(default 0.0.0.0:{DEFAULT_HEALTH_PROBE_PORT})")
    p.add_argument("--db", help=f"SQLite database (default <rootfs>/{DB_UNDER_ROOTFS})")
    p.add_argument("--token-file", help="file holding the bearer token the GM requires")
    p.add_argument("--gm-ca-file", help="CA bundle to verify the GM's TLS certificate (implies wss://)")
    p.add_argument("--cert-file", help="client certificate naming this node (CN or DNS SAN), sent to a wss:// GM "
                                       "that checks node identity (with --key-file)")
    p.add_argument("--key-file", help="the key of --cert-file")
    p.add_argument("--dataset-check-period", type=str,
                   help=f"seconds between dataset sample counts (default {DEFAULT_DATASET_CHECK_PERIOD:g})")
    p.add_argument("--log-level", choices=LOG_LEVELS)
    p.add_argument("--log-format", choices=("json", "console"))
    p.add_argument("--version", action="store_true", help="print the version and exit")
    return p


def load_settings(argv: Sequence[str] | None, environ: Mapping[str, str] | None = None) -> tuple[LCConfig, bool]:
    """``(config, version_requested)``; raises ``SettingError``."""
    env = os.environ if environ is None else environ
    args = build_parser().parse_args(argv)
    if args.version:
        return LCConfig(), True
    cfg = LCConfig()
    cfg.gm_ca_file = args.gm_ca_file or ""
    if cfg.gm_ca_file and not os.path.isfile(cfg.gm_ca_file):
        raise SettingError("--gm-ca-file", f"file {cfg.gm_ca_file!r} does not exist")
    cfg.gm_url = gm_url(*_pick(args.gm_address, env, "--gm-address", "GM_ADDRESS"), tls=bool(cfg.gm_ca_file))
    cfg.cert_file, cfg.key_file = args.cert_file or "", args.key_file or ""
    if bool(cfg.cert_file) != bool(cfg.key_file):
        raise SettingError("--key-file" if cfg.cert_file else "--cert-file", "--cert-file and --key-file go together")
    for flag, path in (("--cert-file", cfg.cert_file), ("--key-file", cfg.key_file)):
        if path and not os.path.isfile(path):
            raise SettingError(flag, f"file {path!r} does not exist")
    if cfg.cert_file and not cfg.gm_url.startswith("wss://"):
        raise SettingError("--cert-file", "a client certificate needs TLS: give --gm-ca-file or a wss:// address")

    node, where = _pick(args.node_name, env, "--node-name", "NODENAME")
    if not node:
        node, where = env.get("HOSTNAME", ""), "--node-name (HOSTNAME)"
    if not node:
        raise SettingError("--node-name", "required (or NODENAME / HOSTNAME)")
    if len(node) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(node):
        raise SettingError(where, f"{node!r} is not a valid node name (a DNS-1123 subdomain: lower-case "
                                  "alphanumerics, '-' and '.', starting and ending with an alphanumeric)")
    cfg.node_name = node

    rootfs, where = _pick(args.rootfs, env, "--rootfs", "ROOTFS_MOUNT_DIR")
    cfg.rootfs = rootfs or DEFAULT_ROOTFS
    if not os.path.isdir(cfg.rootfs):
        raise SettingError(where, f"directory {cfg.rootfs!r} does not exist")

    if args.bind_address is not None:
        cfg.bind_host, cfg.bind_port = _address("--bind-address", args.bind_address)
    elif env.get("BIND_PORT"):
        cfg.bind_port = _port("--bind-address (BIND_PORT)", env["BIND_PORT"])
    if args.health_probe_address is not None:
        cfg.health_probe_host, cfg.health_probe_port = _address("--health-probe-address", args.health_probe_address)

    cfg.db_path = args.db or os.path.join(cfg.rootfs, DB_UNDER_ROOTFS)
    if args.token_file is not None:
        cfg.token = _token("--token-file", args.token_file)
        cfg.token_file = args.token_file
    if args.dataset_check_period is not None:
        cfg.dataset_check_period = _positive("--dataset-check-period", args.dataset_check_period)
    cfg.log_level = args.log_level or "info"
    cfg.log_format = args.log_format or ""
    return cfg, False


def gm_url(address: str, where: str, tls: bool = False) -> str:
    """``host:port`` → ``ws://host:port/`` (``wss://`` with ``tls``); a ws:// or wss:// URL is kept."""
    if not address:
        raise SettingError(where, "required: the GM's edge link address, e.g. gm.sedna:9000")
    if "://" not in address:
        address = f"{'wss' if tls else 'ws'}://{address}/"
    parts = urllib.parse.urlsplit(address)
    if parts.scheme not in ("ws", "wss"):
        raise SettingError(where, f"{address!r}: the scheme must be ws:// or wss://")
    try:
        port = parts.port
    except ValueError:
        raise SettingError(where, f"{address!r}: invalid port") from None
    if not parts.hostname or port is None:
        raise SettingError(where, f"{address!r}: expected host:port")
    if tls and parts.scheme != "wss":
        raise SettingError(where, f"{address!r}: --gm-ca-file needs wss://")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path or "/", parts.query, ""))


def _pick(flag_value: str | None, env: Mapping[str, str], flag: str, variable: str) -> tuple[str, str]:
    """The value of ``flag`` or else of ``variable``, with the name to blame for it."""
    if flag_value is not None:
        return flag_value, flag
    return env.get(variable, ""), f"{flag} ({variable})"


def _port(where: str, text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise SettingError(where, f"{text!r} is not a port (0..65535)")
    return int(text)


def _address(where: str, text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep:
        raise SettingError(where, f"{text!r}: expected host:port")
    host = host.strip("[]") or "0.0.0.0"
    return host, _port(where, port)


def _positive(where: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise SettingError(where, f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0:
        raise SettingError(where, f"must be a finite number > 0, got {text!r}")
    return value


def _token(where: str, path: str) -> str:
    try:
        return read_token(path)
    except OSError as exc:
        raise SettingError(where, f"cannot read {path!r}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SettingError(where, str(exc)) from None
