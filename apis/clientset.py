"""The real clientset: every verb over HTTP, raw JSON, objects as plain dicts.

The configuration is an ``apis.clientconfig.ClientConfig`` (or a ``kubernetes.client.Configuration``, read
duck-typed). This process never imports the ``kubernetes`` package for it: ``from_url`` and ``in_cluster``
(``apis.incluster``) are native, and ``from_kubeconfig`` has the package read the kubeconfig in a short-lived child
process (``apis.kubeconfig``). Requests go through ``apis.http_transport`` and watches through ``apis.http_watch``.
Errors: a non-2xx answer raises the typed ``apis.errors.ApiError``; no answer at all raises ``ApiConnectionError``
— a refused connection is ``ApiConnectionRefusedError``, also the built-in ``ConnectionRefusedError``.
"""

from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING, Any, TypedDict
from urllib.parse import quote

import orjson

from . import meta
from .client import (  # noqa: F401 (re-export)
    PATCH_CONTENT_TYPES,
    PROPAGATION_POLICIES,
    ClientsetBase,
    PatchBody,
    ResourceClient,
)
from .clientconfig import ClientConfig, ConfigError
from .http_transport import (
    DEFAULT_USER_AGENT,
    ApiConnectionError,
    ApiConnectionRefusedError,
    ApiConnectionTimeoutError,
    ConnectionRefusedApiError,
    ResponseDecodeError,
    Transport,
    is_connection_refused,
)
from .http_watch import HTTPWatch
from .incluster import SERVICE_CERT_FILENAME, SERVICE_TOKEN_FILENAME, in_cluster_config
from .kubeconfig import KubeconfigSource, load_kubeconfig
from .logs import get_logger
from .resources import GroupVersionResource, ResourceInfo, lookup
from .watch import ListOptions

if TYPE_CHECKING:
    from typing import Unpack  # Python 3.11+; the project supports 3.10

__all__ = [
    "Clientset",
    "ClientConfig",
    "ClientOptions",
    "HTTPResourceClient",
    "ConfigError",
    "ApiConnectionError",
    "ApiConnectionRefusedError",
    "ConnectionRefusedApiError",
    "ApiConnectionTimeoutError",
    "ResponseDecodeError",
    "is_connection_refused",
    "DEFAULT_FIELD_MANAGER",
    "DEFAULT_USER_AGENT",
    "DEFAULT_WATCH_IDLE_TIMEOUT",
    "WATCH_TIMEOUT_MARGIN",
]

log = get_logger(__name__)

DEFAULT_FIELD_MANAGER = "sedna-controlplane"
# A watch without timeoutSeconds ends after this much silence (a dead socket must not block a reader forever).
DEFAULT_WATCH_IDLE_TIMEOUT = 300.0
# With timeoutSeconds the server closes the watch itself; the client gives it this much extra time.
WATCH_TIMEOUT_MARGIN = 30.0


def _segment(value: str, what: str) -> str:
    """One URL path segment, percent-encoded; refuses values that would change the path's meaning."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string (got {value!r})")
    if value in (".", "..") or "/" in value:
        raise ValueError(f"invalid {what} {value!r}: may not be '.' or '..' or contain '/'")
    return quote(value, safe="")


class HTTPResourceClient(ResourceClient):
    """Every verb on one resource in one namespace ("" = all namespaces for list/watch/delete_collection)."""

    def __init__(
        self,
        transport: Transport,
        info: ResourceInfo,
        namespace: str = "",
        *,
        watch_idle_timeout: float = DEFAULT_WATCH_IDLE_TIMEOUT,
        field_manager: str = DEFAULT_FIELD_MANAGER,
    ) -> None:
        super().__init__(info, namespace)
        if namespace:
            _segment(namespace, "namespace")
        self._transport = transport
        self._watch_idle_timeout = watch_idle_timeout
        self.field_manager = field_manager

    # -- URLs ------------------------------------------------------------------------------------------------------
    def path(self, namespace: str = "", name: str = "", subresource: str = "") -> str:
        """``/api/v1[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`` (``/apis/<group>/<version>/…``)."""
        gvr = self.info.gvr
        parts = [f"/api/{gvr.version}" if not gvr.group else f"/apis/{gvr.group}/{gvr.version}"]
        if self.info.namespaced and namespace:
            parts += ["namespaces", _segment(namespace, "namespace")]
        parts.append(gvr.resource)
        if name:
            parts.append(_segment(name, "name"))
        if subresource:
            parts.append(_segment(subresource, "subresource"))
        return "/".join(parts)

    def _object_path(self, obj: dict[str, Any], subresource: str = "") -> str:
        if not isinstance(obj, dict):
            raise TypeError(f"expected the object as a dict, got {type(obj).__name__}")
        nm = meta.name(obj)
        if not nm:
            raise ValueError(f"{self.info.kind} has no metadata.name: cannot update it")
        return self.path(self._namespace_for(obj), nm, subresource)

    def _log_fields(self) -> dict[str, str]:
        return {"resource": self.gvr.group_resource, "namespace": self.namespace or "<all>"}

    # -- verbs -----------------------------------------------------------------------------------------------------
    def get(self, name: str) -> dict[str, Any]:
        return self._transport.request("GET", self.path(self._namespace_for(None), _require_name(name)))

    def list(self, options: ListOptions | None = None, **kwargs: Any) -> dict[str, Any]:
        opts = self._options(options, kwargs)
        return self._transport.request("GET", self.path(self.namespace), query=opts.to_query())

    def watch(self, options: ListOptions | None = None, **kwargs: Any) -> HTTPWatch:
        """Open a watch; a failed start raises the typed error (410 → ``GoneError``, 429 → ``TooManyRequestsError``).

        The read timeout is ``timeout_seconds + 30 s`` when ``timeout_seconds`` is set, else the client's
        ``watch_idle_timeout``; it ends the iteration of a stream that went silent.
        """
        opts = self._options(options, kwargs)
        if opts.timeout_seconds is not None and opts.timeout_seconds > 0:
            read_timeout = opts.timeout_seconds + WATCH_TIMEOUT_MARGIN
        else:
            read_timeout = self._watch_idle_timeout
        response = self._transport.stream(self.path(self.namespace), opts.to_query(watch=True), read_timeout)
        return HTTPWatch(response, self._log_fields())

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(obj, dict):
            raise TypeError(f"expected the object as a dict, got {type(obj).__name__}")
        return self._transport.request("POST", self.path(self._namespace_for(obj)), body=obj)

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self._transport.request("PUT", self._object_path(obj), body=obj)

    def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        return self._transport.request("PUT", self._object_path(obj, "status"), body=obj)

    def patch(
        self,
        name: str,
        body: PatchBody,
        patch_type: str = "merge",
        subresource: str | None = None,
        *,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        """Patch with the Content-Type of ``patch_type``; "apply" (server-side apply) always sends a fieldManager
        (default ``sedna-controlplane``) and ``force=true`` when asked. ``body`` may be pre-encoded (bytes/str)."""
        self._check_patch_options(patch_type, force)
        query: dict[str, str] = {}
        if patch_type == "apply" or field_manager:
            query["fieldManager"] = field_manager or self.field_manager
        if force:
            query["force"] = "true"
        payload = _patch_payload(body, patch_type)
        path = self.path(self._namespace_for(None), _require_name(name), subresource or "")
        return self._transport.request(
            "PATCH", path, query=query or None, body=payload, content_type=PATCH_CONTENT_TYPES[patch_type]
        )

    def delete(
        self,
        name: str,
        propagation_policy: str | None = None,
        preconditions: dict[str, Any] | None = None,
        *,
        grace_period_seconds: int | None = None,
    ) -> dict[str, Any]:
        """Delete one object; returns what the server answered (the object while finalizers run, else a Status)."""
        body = _delete_options(propagation_policy, preconditions, grace_period_seconds)
        return self._transport.request("DELETE", self.path(self._namespace_for(None), _require_name(name)), body=body)

    def delete_collection(
        self, options: ListOptions | None = None, propagation_policy: str | None = None, **kwargs: Any
    ) -> None:
        opts = self._options(options, kwargs)
        body = _delete_options(propagation_policy, None, None)
        self._transport.request("DELETE", self.path(self.namespace), query=opts.to_query() or None, body=body)


def _require_name(name: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a non-empty object name is required (got {name!r})")
    return name


def _patch_payload(body: object, patch_type: str) -> bytes:
    if isinstance(body, str):
        return body.encode()
    if isinstance(body, (bytes, bytearray)):
        return bytes(body)
    if patch_type == "json" and not isinstance(body, list):
        raise ValueError(f"a json patch is a list of operations, got {type(body).__name__}")
    if patch_type != "json" and not isinstance(body, dict):
        raise ValueError(f"a {patch_type} patch is a JSON object, got {type(body).__name__}")
    return orjson.dumps(body)


def _delete_options(
    propagation_policy: str | None, preconditions: dict[str, Any] | None, grace_period_seconds: int | None
) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy is not None:
        ResourceClient._check_propagation_policy(propagation_policy)
        body["propagationPolicy"] = propagation_policy
    if preconditions:
        unknown = set(preconditions) - {"uid", "resourceVersion"}
        if unknown:
            raise ValueError(f"unknown delete precondition(s) {sorted(unknown)}: expected uid, resourceVersion")
        body["preconditions"] = dict(preconditions)
    if grace_period_seconds is not None:
        body["gracePeriodSeconds"] = int(grace_period_seconds)
    return body


def _with_host(configuration: Any, host: str) -> Any:
    """A copy of ``configuration`` for ``host``; the caller's configuration is never changed."""
    if isinstance(configuration, ClientConfig):
        return configuration.with_host(host)
    configuration = copy.copy(configuration)  # a kubernetes.client.Configuration: its host setter picks the proxy
    configuration.host = host
    return configuration


class ClientOptions(TypedDict, total=False):
    """The keyword options of ``Clientset`` that its constructors (``from_url``, ``from_kubeconfig``,
    ``in_cluster``, ``auto``) pass on."""

    connect_timeout: float
    request_timeout: float
    watch_idle_timeout: float
    user_agent: str
    field_manager: str
    compression: bool
    pool_maxsize: int | None


class Clientset(ClientsetBase):
    """A clientset for one API server. Thread-safe; share one per process and ``close()`` it at the end.

    ``configuration`` is an ``apis.clientconfig.ClientConfig`` or a ``kubernetes.client.Configuration`` (host, bearer
    token incl. refresh hook, basic auth, client certificate, CA, verify_ssl, proxy); ``master`` overrides its host
    (like ``--master``). Timeouts are seconds: ``connect_timeout`` for every request, ``request_timeout`` for the answer of a non-watch request,
    ``watch_idle_timeout`` for the silence that ends a watch started without ``timeout_seconds``.
    """

    def __init__(
        self,
        configuration: Any,
        *,
        master: str | None = None,
        connect_timeout: float = 10.0,
        request_timeout: float = 60.0,
        watch_idle_timeout: float = DEFAULT_WATCH_IDLE_TIMEOUT,
        user_agent: str = DEFAULT_USER_AGENT,
        field_manager: str = DEFAULT_FIELD_MANAGER,
        compression: bool = True,
        pool_maxsize: int | None = None,
    ) -> None:
        if master:
            configuration = _with_host(configuration, master)
        if watch_idle_timeout <= 0:
            raise ValueError("watch_idle_timeout must be positive seconds")
        self.configuration = configuration
        self.transport = Transport(
            configuration,
            connect_timeout=connect_timeout,
            read_timeout=request_timeout,
            user_agent=user_agent,
            compression=compression,
            pool_maxsize=pool_maxsize,
        )
        self.watch_idle_timeout = watch_idle_timeout
        self.field_manager = field_manager

    @property
    def host(self) -> str:
        return self.transport.host

    def resource(self, gvr: GroupVersionResource, namespace: str = "") -> HTTPResourceClient:
        """A client for ``gvr`` (must be registered in ``apis.resources``; ``KeyError`` otherwise)."""
        return HTTPResourceClient(
            self.transport,
            lookup(gvr),
            namespace,
            watch_idle_timeout=self.watch_idle_timeout,
            field_manager=self.field_manager,
        )

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Clientset:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- construction ----------------------------------------------------------------------------------------------
    @classmethod
    def from_url(
        cls,
        host: str,
        token: str | None = None,
        verify: bool = True,
        ca_file: str | None = None,
        **options: Unpack[ClientOptions],
    ) -> Clientset:
        """A clientset for ``host`` with an optional bearer ``token``."""
        cfg = ClientConfig.for_host(host, verify_ssl=verify, ssl_ca_cert=ca_file)
        if token:
            cfg.api_key = {"BearerToken": token}
            cfg.api_key_prefix = {"BearerToken": "Bearer"}
        return cls(cfg, **options)

    @classmethod
    def from_kubeconfig(
        cls,
        path: str | None = None,
        context: str | None = None,
        *,
        master: str | None = None,
        **options: Unpack[ClientOptions],
    ) -> Clientset:
        """Load ``path`` (default ``$KUBECONFIG``, then ``~/.kube/config``; a ``:``-separated list is merged) with
        ``context`` (default: current-context). With ``master`` and no kubeconfig file, connect to ``master``
        without credentials (as client-go's BuildConfigFromFlags does).

        The ``kubernetes`` package reads the file, in a short-lived child process unless it is already imported
        here (``apis.kubeconfig``); an expiring token (exec plugin, OIDC) is renewed the same way."""
        path = path or os.environ.get("KUBECONFIG") or "~/.kube/config"
        files = [os.path.expanduser(p) for p in path.split(os.pathsep) if p]
        if not any(os.path.isfile(f) for f in files):
            if master:
                log.warning("kubeconfig not found; using --master without credentials", kubeconfig=path, master=master)
                return cls(ClientConfig.for_host(master), **options)
            raise ConfigError(f"kubeconfig {path!r} not found (pass a path, set $KUBECONFIG, or use in_cluster())")
        cfg = load_kubeconfig(KubeconfigSource(tuple(files), context, path))
        return cls(cfg, master=master, **options)

    @classmethod
    def in_cluster(
        cls, *, token_file: str | None = None, ca_file: str | None = None, **options: Unpack[ClientOptions]
    ) -> Clientset:
        """The pod's service account: ``KUBERNETES_SERVICE_HOST``/``_PORT`` and the mounted token (re-read
        whenever it changes) and CA. ``token_file``/``ca_file`` override the standard mount paths."""
        cfg = in_cluster_config(token_file or SERVICE_TOKEN_FILENAME, ca_file or SERVICE_CERT_FILENAME)
        return cls(cfg, **options)

    @classmethod
    def auto(
        cls,
        kubeconfig: str | None = None,
        master: str | None = None,
        context: str | None = None,
        **options: Unpack[ClientOptions],
    ) -> Clientset:
        """An explicit ``kubeconfig``/``master`` wins; else in-cluster when ``KUBERNETES_SERVICE_HOST`` is set;
        else ``$KUBECONFIG`` / ``~/.kube/config``."""
        if kubeconfig or master:
            return cls.from_kubeconfig(kubeconfig, context, master=master, **options)
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.in_cluster(**options)
        return cls.from_kubeconfig(None, context, **options)
