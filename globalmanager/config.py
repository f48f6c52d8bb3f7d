"""sedna-gm configuration: Sedna's YAML fields plus metrics, leader election, controllers, workers and logging.

``load_config(path)`` reads the YAML file over the defaults (``globalmanager.app.config_from_args`` lays the
command-line flags over it); ``GMConfig.validate`` checks every field: numbers within bounds (``LIMITS``), URLs,
names and addresses. Every problem raises ``ConfigError`` whose ``key`` names the offending field
(``websocket.port``, ``leaderElection.leaseDuration``, ``controllers[1]``...).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field, fields
from typing import Any
from urllib.parse import urlsplit

import yaml

# re-exported: this module's name for it before it moved to the library
from apis.netaddr import parse_address

__all__ = [
    "ConfigError",
    "GMConfig",
    "KnowledgeBaseServerConfig",
    "LeaderElectionConfig",
    "LocalControllerConfig",
    "WebsocketConfig",
    "config_from_dict",
    "default_lease_namespace",
    "load_config",
    "parse_address",
    "DEFAULT_LEASE_NAMESPACE",
    "DEFAULT_MAX_WORKERS",
    "DEFAULT_WORKERS",
    "LIMITS",
    "MAX_WORKERS",
    "SERVICE_ACCOUNT_NAMESPACE_FILE",
    "LOG_LEVELS",
    "LOG_FORMATS",
]

DEFAULT_WORKERS = 2
DEFAULT_MAX_WORKERS = 32  # a backlog grows a controller's workers up to this many (reconcile.Controller)
MAX_WORKERS = 128  # worker threads per controller
DAY = 86400.0
LIMITS: dict[str, tuple[float, float]] = {
    # key: (lowest, highest) allowed, inclusive; durations in seconds
    "minResyncPeriodSeconds": (1.0, DAY),
    "leaderElection.leaseDuration": (0.1, DAY),
    "leaderElection.renewDeadline": (0.1, DAY),
    "leaderElection.retryPeriod": (0.1, DAY),
    "shutdownTimeoutSeconds": (0.0, DAY),
    "defaultWorkers": (1, MAX_WORKERS),
    "maxWorkers": (1, MAX_WORKERS),
    "websocket.tokenGraceSeconds": (0.0, DAY),
}
"""Bounds of every number: below them a loop spins or nothing waits; above them a thread count, a timeout or a lease
duration no longer fits what the runtime and the API accept."""
DEFAULT_LEASE_NAMESPACE = "sedna"
SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("json", "console", "")  # "" = console on a TTY, else JSON


# Kubernetes name rules (apimachinery validation): namespaces are DNS-1123 labels, Lease names DNS-1123 subdomains.
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


def _check_bounds(key: str, value: float) -> None:
    low, high = LIMITS[key]
    if not low <= value <= high:
        shown = f"{value:g}" if isinstance(value, float) else str(value)
        raise ConfigError(key, f"must be between {low:g} and {high:g}, got {shown}")


def _check_url(key: str, value: str) -> None:
    """An API server or service address as client-go takes it: ``http(s)://host[:port][/path]``."""
    try:
        parts = urlsplit(value)
        port = parts.port  # raises for a port that is not a number or out of range
    except ValueError as exc:
        raise ConfigError(key, f"{value!r} is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or port == 0:
        raise ConfigError(key, f"{value!r} is not a valid URL: expected http(s)://host[:port], e.g. "
                               "https://127.0.0.1:6443")


def _check_dns_label(key: str, value: str) -> None:
    if len(value) > 63 or not _DNS1123_LABEL.fullmatch(value):
        raise ConfigError(key, f"{value!r} is not a valid namespace (a DNS-1123 label: at most 63 lower-case "
                               "alphanumerics or '-', starting and ending with an alphanumeric)")


def _check_dns_subdomain(key: str, value: str) -> None:
    if len(value) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(value):
        raise ConfigError(key, f"{value!r} is not a valid object name (a DNS-1123 subdomain: lower-case "
                               "alphanumerics, '-' and '.', starting and ending with an alphanumeric)")


class ConfigError(ValueError):
    """A configuration problem; ``key`` is the dotted path of the field at fault ("" for the file itself)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}" if key else message)


def _key(name: str) -> Any:
    return {"key": name}


@dataclass
class WebsocketConfig:
    """The edge link LCs connect to (docs/edge.md). Defaults stay compatible with Go Sedna's LC."""

    address: str = field(default="0.0.0.0", metadata=_key("address"))
    port: int = field(default=9000, metadata=_key("port"))
    ping_interval_seconds: float = field(default=20.0, metadata=_key("pingIntervalSeconds"))
    # 16 MiB: a worker report at the LC's 8 MiB bound, base64-encoded in its frame (docs/edge.md)
    max_frame_bytes: int = field(default=16 * 1024 * 1024, metadata=_key("maxFrameBytes"))
    token_file: str = field(default="", metadata=_key("tokenFile"))  # "" = no bearer token required
    # how long the previous token stays accepted once the file changed
    token_grace_seconds: float = field(default=300.0, metadata=_key("tokenGraceSeconds"))
    cert_file: str = field(default="", metadata=_key("certFile"))  # with keyFile: serve wss://
    key_file: str = field(default="", metadata=_key("keyFile"))
    # node identity (docs/edge.md): a directory of per-node tokens (file name = node name), and/or the CA of client
    # certificates whose CN or DNS SAN names the node (needs certFile)
    node_tokens_dir: str = field(default="", metadata=_key("nodeTokensDir"))
    client_ca_file: str = field(default="", metadata=_key("clientCAFile"))

    def validate(self) -> None:
        if not self.address:
            raise ConfigError("websocket.address", "must not be empty (0.0.0.0 = all interfaces)")
        if self.ping_interval_seconds <= 0:
            raise ConfigError("websocket.pingIntervalSeconds", f"must be > 0, got {self.ping_interval_seconds}")
        if self.max_frame_bytes < 1024:
            raise ConfigError("websocket.maxFrameBytes", f"must be >= 1024, got {self.max_frame_bytes}")
        _check_bounds("websocket.tokenGraceSeconds", self.token_grace_seconds)
        if bool(self.cert_file) != bool(self.key_file):
            raise ConfigError("websocket.certFile" if not self.cert_file else "websocket.keyFile",
                              "websocket.certFile and websocket.keyFile go together")
        for key, path in (("tokenFile", self.token_file), ("certFile", self.cert_file), ("keyFile", self.key_file),
                          ("clientCAFile", self.client_ca_file)):
            if path and not os.path.isfile(path):
                raise ConfigError(f"websocket.{key}", f"file {path!r} does not exist")
        if self.node_tokens_dir and not os.path.isdir(self.node_tokens_dir):
            raise ConfigError("websocket.nodeTokensDir", f"directory {self.node_tokens_dir!r} does not exist")
        if self.client_ca_file and not self.cert_file:
            raise ConfigError("websocket.clientCAFile", "client certificates need TLS: set websocket.certFile and keyFile")


@dataclass
class LocalControllerConfig:
    server: str = field(default="http://localhost:9100", metadata=_key("server"))


@dataclass
class KnowledgeBaseServerConfig:
    server: str = field(default="http://localhost:9020", metadata=_key("server"))


def default_lease_namespace(path: str | None = None) -> str:
    """The pod's own namespace (the service account's ``namespace`` file, ``SERVICE_ACCOUNT_NAMESPACE_FILE`` unless
    ``path`` is given), else ``sedna``: a replica then needs no rights outside its namespace."""
    try:
        with open(path or SERVICE_ACCOUNT_NAMESPACE_FILE, encoding="utf-8") as fh:
            namespace = fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return DEFAULT_LEASE_NAMESPACE
    return namespace or DEFAULT_LEASE_NAMESPACE


@dataclass
class LeaderElectionConfig:
    """client-go leaderelection timings (seconds); must satisfy leaseDuration > renewDeadline > 1.2·retryPeriod."""

    enabled: bool = field(default=True, metadata=_key("enabled"))
    lease_name: str = field(default="sedna-gm", metadata=_key("leaseName"))
    namespace: str = field(default_factory=default_lease_namespace, metadata=_key("namespace"))
    lease_duration: float = field(default=15.0, metadata=_key("leaseDuration"))
    renew_deadline: float = field(default=10.0, metadata=_key("renewDeadline"))
    retry_period: float = field(default=2.0, metadata=_key("retryPeriod"))
    identity: str = field(default="", metadata=_key("identity"))  # "" → hostname_uuid


@dataclass
class GMConfig:
    kube_config: str = field(default="", metadata=_key("kubeConfig"))
    master: str = field(default="", metadata=_key("master"))
    namespace: str = field(default="", metadata=_key("namespace"))
    websocket: WebsocketConfig = field(default_factory=WebsocketConfig, metadata=_key("websocket"))
    local_controller: LocalControllerConfig = field(
        default_factory=LocalControllerConfig, metadata=_key("localController")
    )
    knowledge_base_server: KnowledgeBaseServerConfig = field(
        default_factory=KnowledgeBaseServerConfig, metadata=_key("knowledgeBaseServer")
    )
    min_resync_period_seconds: float = field(default=30.0, metadata=_key("minResyncPeriodSeconds"))
    metrics_address: str = field(default=":8080", metadata=_key("metricsAddress"))
    # the kubelet's probes on a listener of their own (controller-runtime's healthProbeBindAddress)
    health_probe_address: str = field(default=":8081", metadata=_key("healthProbeAddress"))
    leader_election: LeaderElectionConfig = field(default_factory=LeaderElectionConfig, metadata=_key("leaderElection"))
    controllers: list[str] | None = field(default=None, metadata=_key("controllers"))  # None = all registered
    workers: dict[str, int] = field(default_factory=dict, metadata=_key("workers"))  # per controller
    default_workers: int = field(default=DEFAULT_WORKERS, metadata=_key("defaultWorkers"))
    max_workers: int = field(default=DEFAULT_MAX_WORKERS, metadata=_key("maxWorkers"))
    shutdown_timeout: float = field(default=10.0, metadata=_key("shutdownTimeoutSeconds"))
    log_level: str = field(default="info", metadata=_key("logLevel"))
    log_format: str = field(default="", metadata=_key("logFormat"))

    def workers_for(self, controller: str) -> int:
        return self.workers.get(controller, self.default_workers)

    def max_workers_for(self, controller: str) -> int:
        """A count set in ``workers`` is fixed; otherwise a backlog grows the workers from ``defaultWorkers`` up to
        ``maxWorkers``."""
        if controller in self.workers:
            return self.workers[controller]
        return max(self.default_workers, self.max_workers)

    def validate(self, known_controllers: list[str] | None = None) -> None:
        """Check cross-field rules; raises ``ConfigError`` naming the key."""
        _check_finite(self, "")
        if self.kube_config and not os.path.exists(self.kube_config):
            raise ConfigError("kubeConfig", f"file {self.kube_config!r} does not exist")
        if self.master:
            _check_url("master", self.master)
        _check_url("localController.server", self.local_controller.server)
        _check_url("knowledgeBaseServer.server", self.knowledge_base_server.server)
        if not 0 <= self.websocket.port < 65536:  # 0: a free port, announced in the log once listening
            raise ConfigError("websocket.port", f"must be in 0..65535, got {self.websocket.port}")
        self.websocket.validate()
        if self.namespace:  # "" = all namespaces
            _check_dns_label("namespace", self.namespace)
        _check_bounds("minResyncPeriodSeconds", self.min_resync_period_seconds)
        for key, address in (("metricsAddress", self.metrics_address),
                             ("healthProbeAddress", self.health_probe_address)):
            try:
                parse_address(address)
            except ValueError as exc:
                raise ConfigError(key, str(exc)) from None
        le = self.leader_election
        for key, value in (
            ("leaseDuration", le.lease_duration),
            ("renewDeadline", le.renew_deadline),
            ("retryPeriod", le.retry_period),
        ):
            _check_bounds(f"leaderElection.{key}", value)
        if le.lease_duration <= le.renew_deadline:
            raise ConfigError("leaderElection.leaseDuration", "must be greater than leaderElection.renewDeadline")
        if le.renew_deadline <= 1.2 * le.retry_period:
            raise ConfigError("leaderElection.renewDeadline", "must be greater than 1.2 × leaderElection.retryPeriod")
        if le.enabled and not le.lease_name:
            raise ConfigError("leaderElection.leaseName", "must not be empty")
        if le.enabled and not le.namespace:
            raise ConfigError("leaderElection.namespace", "must not be empty")
        if le.lease_name:
            _check_dns_subdomain("leaderElection.leaseName", le.lease_name)
        if le.namespace:
            _check_dns_label("leaderElection.namespace", le.namespace)
        if self.log_level.lower() not in LOG_LEVELS:
            raise ConfigError("logLevel", f"must be one of {', '.join(LOG_LEVELS)}, got {self.log_level!r}")
        if self.log_format not in LOG_FORMATS:
            raise ConfigError("logFormat", f"must be json or console, got {self.log_format!r}")
        _check_bounds("defaultWorkers", self.default_workers)
        _check_bounds("maxWorkers", self.max_workers)
        _check_bounds("shutdownTimeoutSeconds", self.shutdown_timeout)
        for name, count in self.workers.items():
            if not 1 <= count <= MAX_WORKERS:
                raise ConfigError(f"workers.{name}", f"must be between 1 and {MAX_WORKERS}, got {count}")
        if known_controllers is not None:
            known = set(known_controllers)
            for i, name in enumerate(self.controllers or []):
                if name not in known:
                    raise ConfigError(
                        f"controllers[{i}]", f"unknown controller {name!r}; known: {', '.join(sorted(known))}"
                    )
            for name in self.workers:
                if name not in known:
                    raise ConfigError(f"workers.{name}", f"unknown controller {name!r}")


def _check_finite(instance: Any, prefix: str) -> None:
    """Every float field (also of nested sections) must be finite: NaN or ±inf would defeat every comparison."""
    for f in fields(instance):
        value = getattr(instance, f.name)
        key = f"{prefix}.{f.metadata['key']}" if prefix else f.metadata["key"]
        if hasattr(value, "__dataclass_fields__"):
            _check_finite(value, key)
        elif isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(key, f"must be a finite number, got {value!r}")


_TYPE_NAMES = {bool: "boolean", int: "integer", float: "number", str: "string"}


def _convert_scalar(value: Any, typ: type, key: str) -> Any:
    if typ is bool:
        if isinstance(value, bool):
            return value
    elif typ is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif typ is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                number = float(value)
            except OverflowError:  # an integer beyond any float
                raise ConfigError(key, f"must be a finite number, got an integer of {len(str(value))} digits") from None
            if not math.isfinite(number):
                raise ConfigError(key, f"must be a finite number, got {value!r}")
            return number
    elif typ is str:
        if isinstance(value, str):
            return value
        if value is None:
            return ""
    raise ConfigError(key, f"expected {_TYPE_NAMES[typ]}, got {type(value).__name__} {value!r}")


def _fill(instance: Any, data: Any, prefix: str) -> None:
    if not isinstance(data, dict):
        raise ConfigError(prefix or "", f"expected a mapping, got {type(data).__name__}")
    by_key = {f.metadata["key"]: f for f in fields(instance)}
    for raw_key, value in data.items():
        key = f"{prefix}.{raw_key}" if prefix else str(raw_key)
        f = by_key.get(raw_key)
        if f is None:
            raise ConfigError(key, "unknown key")
        current = getattr(instance, f.name)
        if hasattr(current, "__dataclass_fields__"):
            if value is not None:
                _fill(current, value, key)
        elif f.name == "controllers":
            setattr(instance, f.name, _string_list(value, key))
        elif f.name == "workers":
            setattr(instance, f.name, _workers(value, key))
        else:
            typ = {"bool": bool, "int": int, "float": float, "str": str}[str(f.type)]
            setattr(instance, f.name, _convert_scalar(value, typ, key))


def _string_list(value: Any, key: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ConfigError(key, f"expected a list of controller names, got {type(value).__name__}")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item:
            raise ConfigError(f"{key}[{i}]", f"expected a controller name, got {item!r}")
    return list(value)


def _workers(value: Any, key: str) -> dict[str, int]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(key, f"expected a mapping controller → worker count, got {type(value).__name__}")
    return {str(k): _convert_scalar(v, int, f"{key}.{k}") for k, v in value.items()}


def config_from_dict(data: dict[str, Any] | None) -> GMConfig:
    """Build a ``GMConfig`` from parsed YAML over the defaults; unknown keys and wrong types raise ``ConfigError``."""
    cfg = GMConfig()
    if data is not None:
        _fill(cfg, data, "")
    return cfg


def load_config(path: str | None) -> GMConfig:
    """Read ``path`` (YAML) over the defaults; ``None`` gives the defaults."""
    if not path:
        return GMConfig()
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except FileNotFoundError:
        raise ConfigError("", f"config file {path!r} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError("", f"config file {path!r} is not valid YAML: {exc}") from None
    except OSError as exc:
        raise ConfigError("", f"cannot read config file {path!r}: {exc}") from None
    return config_from_dict(data)
