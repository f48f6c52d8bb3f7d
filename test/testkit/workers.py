"""Sedna worker pods and an LC stand-in, for tests of the worker simulator (and of whatever reads its reports).

``RecordingLC`` is an HTTP server written from the worker protocol (``POST /sedna/workers/{name}/info``, answer
``{"Status": 200, "Message": "OK"}``) that keeps every report; ``sedna_worker_pod`` builds a pod shaped as Sedna's
GM builds a worker's (labels, env, hostPath mounts of the storage initializer).
"""

from __future__ import annotations

import json
import posixpath
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["RecordingLC", "sedna_worker_pod"]


class RecordingLC:
    """``reports``: ``(worker name from the path, body)`` in arrival order. ``fail_next`` answers the next N posts
    with 500."""

    def __init__(self) -> None:
        self.reports: list[tuple[str, dict[str, Any]]] = []
        self.fail_next = 0
        self.refused = 0
        self._lock = threading.Lock()
        lc = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server API
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                parts = self.path.split("/")
                ok = len(parts) == 5 and parts[1:3] == ["sedna", "workers"] and parts[4] == "info"
                with lc._lock:
                    if ok and lc.fail_next > 0:
                        lc.fail_next -= 1
                        lc.refused += 1
                        ok = False
                    elif ok:
                        lc.reports.append((parts[3], json.loads(body)))
                status = 200 if ok else 500
                answer = json.dumps({"Status": status, "Message": "OK" if ok else "refused"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - http.server API
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def bodies(self, worker: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return [body for name, body in self.reports if worker is None or name == worker]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)


def sedna_worker_pod(
    kind: str,
    worker_type: str,
    job: str,
    env: dict[str, str],
    name: str | None = None,
    namespace: str = "default",
    node: str = "edge-1",
    host_dirs: Sequence[str] = (),
    host_mounts: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    job_uid: str = "job-uid-1",
) -> dict[str, Any]:
    """A worker pod of ``kind`` (lower-cased) for job ``job``, ``env`` its worker container's environment.
    ``host_dirs`` are host directories mounted at ``/home/data<dir>`` (Sedna's layout), ``host_mounts`` maps other
    host directories to their mount paths (e.g. the model hot-update directory)."""
    pairs = [(host, posixpath.join("/home/data", host.lstrip("/"))) for host in host_dirs]
    pairs += list((host_mounts or {}).items())
    volumes = [{"name": f"vol-{i}", "hostPath": {"path": host, "type": "Directory"}} for i, (host, _) in
               enumerate(pairs)]
    mounts = [{"name": f"vol-{i}", "mountPath": mount} for i, (_, mount) in enumerate(pairs)]
    prefix = f"{kind}.sedna.io"
    metadata: dict[str, Any] = {
        "name": name or f"{job}-{worker_type}-abcde",
        "namespace": namespace,
        "labels": {f"{prefix}/name": job, f"{prefix}/uid": job_uid, f"{prefix}/worker-type": worker_type},
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "nodeName": node,
            "restartPolicy": "OnFailure",
            "containers": [{"name": "worker", "image": "kubeedge/sedna-example:v0.4.0",
                            "env": [{"name": k, "value": v} for k, v in env.items()], "volumeMounts": mounts}],
            "volumes": volumes,
        },
    }
