"""Shared fixtures for integration tests: sandbox API servers over real HTTP, from the sandbox's pytest plugin
(``sandbox.pytest_plugin``, loaded by test/conftest.py; docs/sandbox.md).

    def test_something(sandbox):
        sandbox.url          # "http://127.0.0.1:<port>"
        sandbox.kubeconfig   # path of a kubeconfig for it (context "sandbox", namespace "default")
        sandbox.tracker      # the ObjectTracker behind it (seed or inspect objects directly)
        sandbox.faults       # sandbox.faults.Faults: flip knobs while the server runs
        sandbox.kubelet      # the PodSimulator (None with kubelet=False)

    def test_with_the_official_client(api):   # a kubernetes.client.ApiClient for the ``sandbox``
        client.CoreV1Api(api).list_namespaced_pod("default")

Options go through a marker: ``@pytest.mark.sandbox(kubelet=False, watch_history=5, crd_dirs=[...])`` (any
``SandboxAPIServer`` keyword). ``make_sandbox(**kwargs)`` (the plugin's ``sandbox_factory``) starts extra servers
in one test. Every server is stopped (watches closed, threads joined) when the test ends.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kubernetes import client

from sandbox.pytest_plugin import Sandbox


@pytest.fixture
def make_sandbox(sandbox_factory: Callable[..., Sandbox]) -> Callable[..., Sandbox]:
    """``make_sandbox(**SandboxAPIServer kwargs)`` → a started ``Sandbox``; all stopped at teardown."""
    return sandbox_factory


@pytest.fixture
def api(sandbox: Sandbox) -> client.ApiClient:
    """An official ``kubernetes`` ApiClient for ``sandbox`` (closed when it stops)."""
    return sandbox.api_client()
