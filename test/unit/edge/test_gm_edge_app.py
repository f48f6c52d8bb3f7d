"""The edge link inside sedna-gm: settings and flag, served by the leader once the caches synced, TLS."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator

import pytest
import websockets
import websockets.sync.client
from prometheus_client import CollectorRegistry
from testkit import GoLC, free_port, self_signed_cert, wait_for

from apis.fake import FakeClientset
from globalmanager.app import GlobalManager, config_from_args
from globalmanager.config import ConfigError, GMConfig, config_from_dict
from globalmanager.messagelayer import EdgeServer, MessageLayer
from localcontroller.gmclient import GMClient
from localcontroller.store import Store

DATASET = {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"namespace": "default", "name": "d1"},
           "spec": {"url": "/data/a.txt", "format": "txt", "nodeName": "edge-1"}}


def test_websocket_address_flag_and_defaults():
    cfg, _ = config_from_args(["--websocket-address", "127.0.0.1:9443"])
    assert (cfg.websocket.address, cfg.websocket.port) == ("127.0.0.1", 9443)
    defaults = GMConfig().websocket
    assert (defaults.address, defaults.port, defaults.ping_interval_seconds, defaults.max_frame_bytes,
            defaults.token_file) == ("0.0.0.0", 9000, 20.0, 16 * 1024 * 1024, "")
    with pytest.raises(ConfigError) as info:
        config_from_args(["--websocket-address", "nowhere"])
    assert info.value.key == "--websocket-address"


@pytest.mark.parametrize(
    ("websocket", "key"),
    [
        ({"pingIntervalSeconds": 0}, "websocket.pingIntervalSeconds"),
        ({"maxFrameBytes": 10}, "websocket.maxFrameBytes"),
        ({"certFile": "/etc/hostname"}, "websocket.keyFile"),
        ({"tokenFile": "/no/such/token"}, "websocket.tokenFile"),
        ({"address": ""}, "websocket.address"),
    ],
)
def test_bad_websocket_settings_name_their_key(websocket, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict({"websocket": websocket}).validate()
    assert info.value.key == key


@pytest.fixture
def leader() -> Iterator[GlobalManager]:
    cs = FakeClientset(DATASET)
    cfg = GMConfig(controllers=["Dataset", "Model"])
    cfg.leader_election.enabled = False
    cfg.metrics_address = cfg.health_probe_address = "127.0.0.1:0"
    cfg.websocket.address, cfg.websocket.port = "127.0.0.1", 0
    gm = GlobalManager(cfg, clientset=cs, registry=CollectorRegistry())
    thread = threading.Thread(target=gm.run, daemon=True)
    thread.start()
    yield gm
    gm.stop()
    thread.join(15)


def test_the_leader_serves_lcs_once_its_caches_synced(leader):
    wait_for("the edge server", lambda: leader.edge_server is not None, timeout=20)
    lc = GoLC(f"ws://127.0.0.1:{leader.edge_server.port}/", "edge-1")
    header, content = lc.recv()
    assert (header["operation"], header["resourceName"], content["spec"]) == ("insert", "d1", DATASET["spec"])
    lc.close()


def test_a_standby_accepts_no_lc():
    cs = FakeClientset()
    cfg = GMConfig()
    cfg.metrics_address = cfg.health_probe_address = "127.0.0.1:0"
    # a port nothing binds: the standby must not either
    cfg.websocket.address, cfg.websocket.port = "127.0.0.1", free_port()
    cfg.leader_election.identity = "standby"
    from datetime import datetime, timezone

    from apis.meta import format_time
    from apis.resources import LEASES

    now = format_time(datetime.now(timezone.utc)).replace("Z", ".000000Z")
    cs.resource(LEASES, "sedna").create({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "sedna-gm", "namespace": "sedna"},
        "spec": {"holderIdentity": "other", "leaseDurationSeconds": 3600, "acquireTime": now, "renewTime": now}})
    gm = GlobalManager(cfg, clientset=cs, registry=CollectorRegistry())
    thread = threading.Thread(target=gm.run, daemon=True)
    thread.start()
    try:
        wait_for("standing by", lambda: gm.elector is not None and "standing by" in gm._ready()[1], timeout=20)
        assert gm.edge_server is None
        with pytest.raises(OSError):
            GoLC(f"ws://127.0.0.1:{cfg.websocket.port}/", "edge-1")
    finally:
        gm.stop()
        thread.join(15)


def test_tls_with_a_ca_file(tmp_path):
    cert, key = self_signed_cert(tmp_path)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert, key)
    layer = MessageLayer(CollectorRegistry())
    layer.add_state_source("dataset", lambda node: [DATASET])
    layer.start()
    server = EdgeServer(layer, "127.0.0.1", 0, ssl_context=server_context)
    server.start()
    store = Store(str(tmp_path / "lc.db"))
    frames: list = []
    client = GMClient(f"wss://127.0.0.1:{server.port}/", "edge-1", store, frames.append, lambda body: None,
                      ssl_context=ssl.create_default_context(cafile=str(cert)))
    stop = threading.Event()
    client.start(stop)
    try:
        wait_for("the dataset over wss", lambda: frames)
        assert frames[0].json() == DATASET
        with pytest.raises(websockets.exceptions.InvalidMessage):
            GoLC(f"ws://127.0.0.1:{server.port}/", "edge-2")  # plain ws to a TLS port gets no websocket answer
        untrusted = ssl.create_default_context()  # the system CAs do not know the self-signed certificate
        with pytest.raises(ssl.SSLCertVerificationError):
            websockets.sync.client.connect(f"wss://127.0.0.1:{server.port}/", ssl=untrusted,
                                           additional_headers={"Node-Name": "edge-3"}, open_timeout=5)
    finally:
        stop.set()
        client.join(5)
        server.stop()
        layer.stop()
        store.close()


def test_an_edge_port_that_cannot_be_bound_stops_sedna_gm_with_exit_1():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        cfg = GMConfig(controllers=["Dataset"])
        cfg.leader_election.enabled = False
        cfg.metrics_address = cfg.health_probe_address = "127.0.0.1:0"
        cfg.websocket.address, cfg.websocket.port = "127.0.0.1", taken.getsockname()[1]
        gm = GlobalManager(cfg, clientset=FakeClientset(), registry=CollectorRegistry())
        result: dict[str, int] = {}
        thread = threading.Thread(target=lambda: result.setdefault("code", gm.run()), daemon=True)
        thread.start()
        thread.join(30)
    assert result == {"code": 1}
