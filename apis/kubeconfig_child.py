"""Resolve a kubeconfig with the ``kubernetes`` package and print what a client needs as one JSON object.

``python -m apis.kubeconfig_child [--context NAME] -- FILE...`` (the files are merged as ``$KUBECONFIG`` lists are)
is what ``apis.kubeconfig`` runs in a short-lived child process, so that the long-running process never imports
``kubernetes`` (see there). The library does the work: merging, contexts, relative paths, exec plugins, OIDC and gcp
auth providers. Output on stdout (a pipe to the parent; it carries secrets): see ``resolve``. On failure: the reason
on the last line of stderr, exit status 1.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import sys
import tempfile
import threading
from typing import Any

__all__ = ["resolve", "main"]

# The same bound as apis.clientconfig.MAX_CREDENTIAL_BYTES (not imported: the child stays independent of the parent).
MAX_CREDENTIAL_BYTES = 1024 * 1024

# The library caches the temporary files it writes (by content) in a module global: one resolution at a time.
_lock = threading.Lock()


def _file_or_data(path: str | None, private_dir: str, what: str) -> tuple[str | None, str | None]:
    """``(path, None)`` for a file the kubeconfig names, ``(None, base64 content)`` for one the library wrote for
    inline data (it removes those at exit)."""
    if not path:
        return None, None
    if os.path.commonpath([os.path.abspath(path), private_dir]) != private_dir:
        return path, None
    with open(path, "rb") as fh:
        data = fh.read(MAX_CREDENTIAL_BYTES + 1)
    if len(data) > MAX_CREDENTIAL_BYTES:
        raise ValueError(f"the {what} is larger than {MAX_CREDENTIAL_BYTES} bytes")
    return None, base64.b64encode(data).decode("ascii")


def resolve(files: list[str], context: str | None) -> dict[str, Any]:
    """The client settings of ``context`` (default: current-context) of the merged ``files``:

    ``host``; ``authorization`` (the whole Authorization header value, ``Bearer …`` or ``Basic …``, or null);
    ``expiry`` (epoch seconds when the token expires, else null); ``verify_ssl``; ``tls_server_name``; ``proxy``
    (the cluster's ``proxy-url``, else null: the environment's proxy is the parent's business); and for the CA, the
    client certificate and key each ``<x>_file`` (a file the kubeconfig names) or ``<x>_data`` (base64 content).
    What the library only logs (a failed exec plugin, after which it carries on without a credential) goes to the
    root logger: in the child, to stderr, which the parent reads.
    Raises the library's exceptions (``ConfigException``, YAML and OS errors) for a kubeconfig it cannot use."""
    from kubernetes.client import Configuration
    from kubernetes.config.config_exception import ConfigException
    from kubernetes.config.kube_config import KubeConfigLoader, KubeConfigMerger

    with _lock:
        private_dir = os.path.realpath(tempfile.mkdtemp(prefix="sedna-kubeconfig-"))
        try:
            merged = KubeConfigMerger(os.pathsep.join(files))
            if merged.config is None:
                raise ConfigException("Invalid kube-config file. No configuration found.")
            loader = KubeConfigLoader(config_dict=merged.config, active_context=context, config_base_path=None,
                                      temp_file_path=private_dir)
            cfg = Configuration()
            loader.load_and_set(cfg)
            expiry = getattr(loader, "expiry", None)  # set by the exec, oidc and gcp loaders for expiring tokens
            record: dict[str, Any] = {
                "host": cfg.host,
                "authorization": cfg.api_key.get("BearerToken"),
                "expiry": expiry.timestamp() if expiry is not None else None,
                "verify_ssl": bool(cfg.verify_ssl),
                "tls_server_name": cfg.tls_server_name,
                "proxy": getattr(loader, "proxy", None),  # only a proxy-url of the cluster
            }
            for key, path, what in (("ca", cfg.ssl_ca_cert, "certificate authority"),
                                    ("cert", cfg.cert_file, "client certificate"),
                                    ("key", cfg.key_file, "client key")):
                record[f"{key}_file"], record[f"{key}_data"] = _file_or_data(path, private_dir, what)
            return record
        finally:
            shutil.rmtree(private_dir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apis.kubeconfig_child", description=__doc__.splitlines()[0])
    parser.add_argument("--context", default=None, help="the context to use (default: current-context)")
    parser.add_argument("files", nargs="+", help="kubeconfig files, merged in order")
    args = parser.parse_args(argv)
    try:
        record = resolve(args.files, args.context)
    except Exception as exc:  # the library's ConfigException, YAML and OS errors: all go back as the message
        print(str(exc) or type(exc).__name__, file=sys.stderr)
        return 1
    import orjson

    sys.stdout.buffer.write(orjson.dumps(record))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip the interpreter's teardown of the kubernetes package's module graph (a third of this process's time);
    # the library's own temporary files were in the private directory, removed already.
    os._exit(status)
