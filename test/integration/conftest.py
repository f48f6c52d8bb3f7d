"""Shared fixtures for integration tests: an in-process sandbox API server over real HTTP.

    def test_something(sandbox):
        sandbox.url          # "http://127.0.0.1:<port>"
        sandbox.kubeconfig   # path of a kubeconfig for it (context "sandbox", namespace "default")
        sandbox.tracker      # the ObjectTracker behind it (seed or inspect objects directly)
        sandbox.faults       # sandbox.faults.Faults: flip knobs while the server runs
        sandbox.kubelet      # the PodSimulator (None with kubelet=False)

    def test_with_the_official_client(api):   # a kubernetes.client.ApiClient for the ``sandbox``
        client.CoreV1Api(api).list_namespaced_pod("default")

Options go through a marker: ``@pytest.mark.sandbox(kubelet=False, watch_history=5, crd_dirs=[...])`` (any
``SandboxAPIServer`` keyword). ``make_sandbox(**kwargs)`` starts extra servers in one test. Every server is
stopped (watches closed, threads joined) when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config

from sandbox.apiserver import SandboxAPIServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "sandbox(**kwargs): SandboxAPIServer options for the `sandbox` fixture")


@dataclass
class Sandbox:
    """A running sandbox API server and the kubeconfig written for it."""

    server: SandboxAPIServer
    kubeconfig: str

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def tracker(self) -> Any:
        return self.server.tracker

    @property
    def faults(self) -> Any:
        return self.server.faults

    @property
    def kubelet(self) -> Any:
        return self.server.kubelet


@pytest.fixture
def make_sandbox(tmp_path: Path) -> Iterator[Callable[..., Sandbox]]:
    """Factory: ``make_sandbox(**SandboxAPIServer kwargs)`` → a started ``Sandbox``; all stopped at teardown."""
    started: list[SandboxAPIServer] = []

    def make(**kwargs: Any) -> Sandbox:
        server = SandboxAPIServer(**kwargs).start()
        started.append(server)
        kubeconfig = server.write_kubeconfig(tmp_path / f"kubeconfig-{len(started)}")
        return Sandbox(server, str(kubeconfig))

    yield make
    for server in reversed(started):
        server.stop()


@pytest.fixture
def sandbox(request: pytest.FixtureRequest, make_sandbox: Callable[..., Sandbox]) -> Sandbox:
    """A sandbox on a free port; options from ``@pytest.mark.sandbox(...)``."""
    marker = request.node.get_closest_marker("sandbox")
    return make_sandbox(**(marker.kwargs if marker else {}))


@pytest.fixture
def api(sandbox: Sandbox) -> Iterator[client.ApiClient]:
    """An official ``kubernetes`` ApiClient for ``sandbox``, on its own Configuration (never the global default)."""
    cfg = client.Configuration()
    config.load_kube_config(config_file=sandbox.kubeconfig, client_configuration=cfg)
    api_client = client.ApiClient(cfg)
    yield api_client
    api_client.close()
