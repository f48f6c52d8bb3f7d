"""Load a kubeconfig into a ``ClientConfig`` without importing the ``kubernetes`` package in this process.

The kubeconfig is still read by the ``kubernetes`` package (merging of ``:``-separated lists, contexts, relative
paths, exec plugins, OIDC and gcp auth providers), but in a short-lived child process (``apis.kubeconfig_child``)
that prints the resolved settings as JSON through a pipe: ``import kubernetes.client`` alone costs a long-running
process about 18 MB of RSS (its generated models) and half a second of start-up. When ``kubernetes`` is already
imported here (tests, tools that use its client anyway) the same resolution runs in-process: it costs nothing more.
``MODE`` forces one way ("child", "in-process"; default "auto").

Guarantees:
- Inline CA data stays in memory (``ca_cert_data``); an inline client certificate and key are written to private
  files (``CredentialFiles``: 0700 directory, 0600 files, removed at exit). Files the kubeconfig names are used by
  path. Nothing the child prints (tokens, keys) is logged or kept outside the configuration.
- A token with an expiry (exec plugin ``expirationTimestamp``, OIDC, gcp) is renewed by running the resolution
  again when it is about to expire (``KubeconfigRefresh``, the configuration's refresh hook, before a request). A
  failed renewal keeps the current credential, is logged, and is tried again ``RETRY_AFTER_FAILURE`` later.
- A failure is a ``ConfigError`` naming the kubeconfig (and context) with the child's last words (bounded); the
  child gets ``CHILD_TIMEOUT`` seconds, and its answer at most ``MAX_CHILD_OUTPUT`` bytes.
"""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import orjson

from .clientconfig import MAX_CREDENTIAL_BYTES, ClientConfig, ConfigError, CredentialFiles
from .logs import get_logger

__all__ = ["MODE", "KubeconfigSource", "KubeconfigRefresh", "load_kubeconfig", "CHILD_MODULE"]

log = get_logger(__name__)

MODE: Literal["auto", "child", "in-process"] = "auto"
CHILD_MODULE = "apis.kubeconfig_child"
CHILD_TIMEOUT = 60.0  # an exec plugin may call a cloud API; it may not hang the caller forever
MAX_CHILD_OUTPUT = 4 * MAX_CREDENTIAL_BYTES  # CA, certificate and key (base64) and a token
MAX_ERROR_CHARS = 2000  # of the child's stderr, in an error message or a log line
# A token is renewed this long before it expires (the kubernetes package's margin), or at half its lifetime
# when that is shorter (so a five-minute token does not start a child before every request).
EXPIRY_SKEW = 300.0
RETRY_AFTER_FAILURE = 10.0

_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)  # the directory that holds ``apis``


def _use_child() -> bool:
    if MODE == "auto":
        return "kubernetes" not in sys.modules
    return MODE == "child"


@dataclass(frozen=True)
class KubeconfigSource:
    """Which kubeconfig to resolve: ``files`` (merged in order), ``context`` (None: current-context); ``display``
    is how messages name it (the path as the user gave it)."""

    files: tuple[str, ...]
    context: str | None
    display: str

    def describe(self) -> str:
        return f"kubeconfig {self.display!r}" + (f" context {self.context!r}" if self.context else "")

    def resolve(self) -> dict[str, Any]:
        """The resolved settings (see ``apis.kubeconfig_child.resolve``); ``ConfigError`` when they cannot be had."""
        record = self._run_child() if _use_child() else self._run_in_process()
        return _checked(record, self)

    def _run_in_process(self) -> dict[str, Any]:
        from .kubeconfig_child import resolve

        try:
            return resolve(list(self.files), self.context)
        except Exception as exc:  # ConfigException, YAML and OS errors all mean the same to the caller
            raise ConfigError(f"cannot load {self.describe()}: {exc}") from exc

    def _run_child(self) -> dict[str, Any]:
        cmd = [sys.executable, "-m", CHILD_MODULE, *(["--context", self.context] if self.context else []), "--",
               *self.files]
        env = dict(os.environ)
        env.pop("PYTHONPROFILEIMPORTTIME", None)  # the parent's diagnostics; in the child it is noise on stderr
        env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH")) if p)
        with tempfile.TemporaryFile() as stderr:  # the child's diagnostics only; its answer goes through the pipe
            try:
                returncode, answer = _run_bounded(cmd, env, stderr)
            except subprocess.TimeoutExpired:
                raise ConfigError(f"cannot load {self.describe()}: the loader did not finish within "
                                  f"{CHILD_TIMEOUT:g} s (an exec plugin waiting for input?)") from None
            except OSError as exc:
                raise ConfigError(f"cannot load {self.describe()}: cannot start the loader: {exc}") from None
            said = _tail(stderr)
        if len(answer) > MAX_CHILD_OUTPUT:
            raise ConfigError(f"cannot load {self.describe()}: the loader's answer is larger than "
                              f"{MAX_CHILD_OUTPUT} bytes")
        if returncode != 0:
            reason = said or f"the loader exited with status {returncode}"
            raise ConfigError(f"cannot load {self.describe()}: {reason}")
        try:
            record = orjson.loads(answer)
        except orjson.JSONDecodeError:
            raise ConfigError(f"cannot load {self.describe()}: the loader's answer is not JSON") from None
        if not isinstance(record, dict):
            raise ConfigError(f"cannot load {self.describe()}: the loader's answer is not a JSON object")
        record["diagnostics"] = said  # what the library logged (a failed exec plugin), warnings
        return record


def _run_bounded(cmd: list[str], env: dict[str, str], stderr: IO[bytes]) -> tuple[int, bytes]:
    """Run the child: its exit status and at most ``MAX_CHILD_OUTPUT + 1`` bytes of its stdout (it is killed when
    it writes more); ``subprocess.TimeoutExpired`` when it was killed after ``CHILD_TIMEOUT`` seconds."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr, env=env)
    timed_out = threading.Event()

    def on_timeout() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(CHILD_TIMEOUT, on_timeout)
    timer.start()
    try:
        assert proc.stdout is not None  # stdout=PIPE
        with proc.stdout:
            answer = proc.stdout.read(MAX_CHILD_OUTPUT + 1)
        if len(answer) > MAX_CHILD_OUTPUT:
            proc.kill()
        returncode = proc.wait()  # still bounded by the timer
    finally:
        timer.cancel()
        if proc.poll() is None:  # an exception above: do not leave the child behind
            proc.kill()
            proc.wait()
    if timed_out.is_set():
        raise subprocess.TimeoutExpired(cmd, CHILD_TIMEOUT)
    return returncode, answer


def _tail(stream: IO[bytes]) -> str:
    """The last ``MAX_ERROR_CHARS`` characters the child wrote to ``stream`` (a file), stripped."""
    stream.seek(0, os.SEEK_END)
    stream.seek(max(0, stream.tell() - 4 * MAX_ERROR_CHARS))
    return stream.read().decode("utf-8", errors="replace").strip()[-MAX_ERROR_CHARS:]


_RECORD_TYPES: dict[str, type | tuple[type, ...]] = {
    "host": str, "authorization": str, "expiry": (int, float), "verify_ssl": bool, "tls_server_name": str,
    "proxy": str, "ca_file": str, "ca_data": str, "cert_file": str, "cert_data": str, "key_file": str,
    "key_data": str,
}


def _checked(record: dict[str, Any], source: KubeconfigSource) -> dict[str, Any]:
    """``record`` when every field the loader promises has its type (``None`` allowed but for host/verify_ssl)."""
    for key, kind in _RECORD_TYPES.items():
        value = record.get(key)
        if value is None and key not in ("host", "verify_ssl"):
            continue
        if not isinstance(value, kind):
            raise ConfigError(f"cannot load {source.describe()}: the loader's answer has no valid {key!r}")
    record.setdefault("diagnostics", "")  # in-process, the library logs to this process's loggers
    return record


def _decoded(record: dict[str, Any], key: str) -> bytes | None:
    text = record.get(f"{key}_data")
    if text is None:
        return None
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"the loader's {key}_data is not base64") from None


@dataclass(frozen=True)
class Credentials:
    """What the client presents: the Authorization value, the client certificate and key files, and when the
    token expires (epoch seconds; None: never) as of ``loaded_at``."""

    authorization: str | None
    cert_file: str | None
    key_file: str | None
    expiry: float | None
    loaded_at: float

    def renew_at(self) -> float | None:
        if self.expiry is None:
            return None
        return self.expiry - min(EXPIRY_SKEW, max(0.0, self.expiry - self.loaded_at) / 2)


def _credentials(record: dict[str, Any], files: CredentialFiles | None, now: float) -> tuple[Credentials,
                                                                                              CredentialFiles | None]:
    """The credentials of ``record``; inline certificate and key data go to ``files`` (made when needed)."""
    paths: dict[str, str | None] = {}
    for key, name in (("cert", "client.crt"), ("key", "client.key")):
        data = _decoded(record, key)
        if data is not None:
            files = files or CredentialFiles()
            paths[key] = files.write(name, data)
        else:
            paths[key] = record.get(f"{key}_file")
    creds = Credentials(record.get("authorization"), paths["cert"], paths["key"], record.get("expiry"), now)
    return creds, files


class KubeconfigRefresh:
    """The refresh hook of a kubeconfig configuration with an expiring token: before a request, resolves the
    kubeconfig again when the token is about to expire, and puts the current credential in the configuration.
    Thread-safe; shared by every copy of the configuration (``ClientConfig.with_host``). ``clock`` is settable
    (tests)."""

    def __init__(self, source: KubeconfigSource, creds: Credentials, files: CredentialFiles | None) -> None:
        self.source = source
        self.clock: Callable[[], float] = time.time
        self._creds = creds
        self._files = files
        self._retry_at = 0.0
        self._lock = threading.Lock()

    def __call__(self, cfg: ClientConfig) -> None:
        with self._lock:
            renew_at = self._creds.renew_at()
            now = self.clock()
            if renew_at is not None and now >= renew_at and now >= self._retry_at:
                self._renew(now)
            creds = self._creds
        _apply(cfg, creds)

    def _renew(self, now: float) -> None:
        try:
            record = self.source.resolve()
            creds, self._files = _credentials(record, self._files, now)
        except (ConfigError, ValueError, OSError) as exc:
            problem = str(exc)
        else:
            if creds.authorization or creds.cert_file:
                log.info("kubeconfig credential renewed", kubeconfig=self.source.display,
                         context=self.source.context,
                         expires_in_seconds=None if creds.expiry is None else round(creds.expiry - now))
                self._creds = creds
                return
            said = record["diagnostics"]
            problem = "the kubeconfig gave no credential" + (f" ({said})" if said else "")
        self._retry_at = now + RETRY_AFTER_FAILURE
        log.error("cannot renew the kubeconfig credential; keeping the current one, trying again later",
                  kubeconfig=self.source.display, context=self.source.context, error=problem[-MAX_ERROR_CHARS:],
                  retry_in_seconds=RETRY_AFTER_FAILURE)


def _apply(cfg: ClientConfig, creds: Credentials) -> None:
    if creds.authorization:
        cfg.api_key["BearerToken"] = creds.authorization
        cfg.api_key_prefix.pop("BearerToken", None)  # the value carries its scheme
    else:
        cfg.api_key.pop("BearerToken", None)
    cfg.cert_file, cfg.key_file = creds.cert_file, creds.key_file


def load_kubeconfig(source: KubeconfigSource) -> ClientConfig:
    """The configuration ``source`` resolves to; ``ConfigError`` when it cannot be loaded."""
    record = source.resolve()
    if record["diagnostics"]:
        log.warning("the kubeconfig loader reported a problem", kubeconfig=source.display, context=source.context,
                    detail=record["diagnostics"])
    try:
        creds, files = _credentials(record, None, time.time())
        ca_data = _decoded(record, "ca")
    except (ValueError, OSError) as exc:
        raise ConfigError(f"cannot load {source.describe()}: {exc}") from None
    fields: dict[str, Any] = {
        "verify_ssl": record["verify_ssl"],
        "tls_server_name": record.get("tls_server_name"),
        "ssl_ca_cert": record.get("ca_file"),
        "ca_cert_data": _pem_or_der(ca_data),
        "credential_files": files,
    }
    if record.get("proxy"):
        fields["proxy"] = record["proxy"]
    cfg = ClientConfig.for_host(record["host"], **fields)
    _apply(cfg, creds)
    if creds.expiry is not None:
        cfg.refresh_api_key_hook = KubeconfigRefresh(source, creds, files)
    return cfg


def _pem_or_der(data: bytes | None) -> str | bytes | None:
    """CA data for urllib3: PEM as text; anything else stays bytes (read as DER)."""
    if data is None:
        return None
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        return data
