"""The operability server: /metrics, /healthz, /readyz and named checks."""

from __future__ import annotations

import urllib.error
import urllib.request

from prometheus_client import CollectorRegistry, Counter

from globalmanager.server import OperabilityServer


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_endpoints():
    registry = CollectorRegistry()
    Counter("sedna_gm_test", "t", registry=registry).inc()
    server = OperabilityServer("127.0.0.1:0", registry)
    ready = {"ok": False}
    server.add_healthz_check("ping", lambda: (True, ""))
    server.add_readyz_check("controllers", lambda: (ready["ok"], "" if ready["ok"] else "caches not synced"))
    server.add_readyz_check("broken", lambda: 1 / 0 if not ready["ok"] else (True, ""))
    server.start()
    try:
        base = server.url
        assert get(base + "/healthz") == (200, "ok\n")
        assert get(base + "/livez") == (200, "ok\n")
        code, body = get(base + "/readyz")
        assert code == 503 and "[-]controllers failed: caches not synced" in body and "[-]broken" in body
        ready["ok"] = True
        assert get(base + "/readyz") == (200, "ok\n")
        assert get(base + "/readyz/controllers")[0] == 200
        assert get(base + "/readyz/nope")[0] == 404
        code, body = get(base + "/metrics")
        assert code == 200 and "sedna_gm_test_total 1.0" in body
        assert get(base + "/other")[0] == 404
    finally:
        server.stop()
