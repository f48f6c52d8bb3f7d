"""pytest fixtures that run the sandbox API server for a test suite: what envtest is to Go, without binaries.

Installed with the package (a ``pytest11`` entry point named ``sandbox.pytest_plugin``), so any project that
``pip install``s sedna-controlplane has these fixtures; from a source tree, load it with ``-p sandbox.pytest_plugin``
or ``pytest_plugins = ["sandbox.pytest_plugin"]`` in the root conftest.py.

- ``sandbox_server`` (session): one server on a free port of 127.0.0.1, in a thread of the test process, with
  Sedna's CRDs (``sedna.io`` kinds and ElasticAIJob) registered and the pod simulator running; a ``Sandbox``.
- ``sandbox_namespace`` (function): a fresh namespace on ``sandbox_server`` (its name), deleted after the test.
- ``sandbox`` (function): a server of the test's own, options from ``@pytest.mark.sandbox(**kwargs)`` (any
  ``SandboxAPIServer`` keyword: ``kubelet=False``, ``watch_history=5``, ``crd_dirs=[...]``, ``rbac=True``, ...).
- ``sandbox_factory`` (function): ``sandbox_factory(**kwargs)`` starts another server; all stop at teardown.

A ``Sandbox`` has ``.url``, ``.kubeconfig`` (the path of a kubeconfig file for it: context ``sandbox``, namespace
``default``, an admin token), ``.clientset()`` (an ``apis.Clientset``), ``.api_client()`` (an ``ApiClient`` of the
official ``kubernetes`` package), and, since the server runs in this process, ``.tracker`` (its ``ObjectTracker``),
``.faults`` (fault knobs to flip while it runs) and ``.kubelet`` (its ``PodSimulator``, None without it). Clients it
hands out are closed when it stops.

Options of ``sandbox_server`` (command line, or ini): ``--sandbox-no-kubelet`` / ``sandbox_kubelet = false`` (no
pod simulator: pods stay as written), ``--sandbox-crds DIR`` (repeatable) / ``sandbox_crds`` (more CRD
directories), ``sandbox_sedna_crds = false`` (without Sedna's CRDs).

This module imports only pytest when loaded (it is loaded in every pytest run of a project that installs the
package); the server is imported when a fixture first starts one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

    from apis import Clientset
    from sandbox.apiserver import SandboxAPIServer

__all__ = ["Sandbox", "SandboxFactory"]

_MARKER = "sandbox"


@dataclass
class Sandbox:
    """A running sandbox API server, the kubeconfig written for it and the clients handed out for it."""

    server: SandboxAPIServer
    kubeconfig: str
    _clients: list[Any] = field(default_factory=list, init=False, repr=False)

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

    def clientset(self, **options: Any) -> Clientset:
        """A new ``apis.Clientset`` from ``kubeconfig`` (``options`` as ``Clientset.from_kubeconfig`` takes them)."""
        from apis import Clientset

        cs = Clientset.from_kubeconfig(self.kubeconfig, **options)
        self._clients.append(cs)
        return cs

    def api_client(self) -> ApiClient:
        """A new ``kubernetes.client.ApiClient`` from ``kubeconfig``, on its own Configuration (never the global
        default one)."""
        from kubernetes import client, config

        cfg = client.Configuration()
        config.load_kube_config(config_file=self.kubeconfig, client_configuration=cfg)
        api = client.ApiClient(cfg)
        self._clients.append(api)
        return api

    def stop(self) -> None:
        """Close the clients handed out, then stop the server (watches closed, threads joined). Idempotent."""
        while self._clients:
            self._clients.pop().close()
        self.server.stop()


class SandboxFactory:
    """Starts ``Sandbox``es, each with its kubeconfig under ``directory``; ``stop_all`` stops them, newest first."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.started: list[Sandbox] = []

    def __call__(self, **kwargs: Any) -> Sandbox:
        """Start a server with ``SandboxAPIServer(**kwargs)`` and write its kubeconfig."""
        from sandbox.apiserver import SandboxAPIServer

        server = SandboxAPIServer(**kwargs).start()
        try:
            kubeconfig = server.write_kubeconfig(self.directory / f"kubeconfig-{len(self.started) + 1}")
        except BaseException:
            server.stop()
            raise
        box = Sandbox(server, str(kubeconfig))
        self.started.append(box)
        return box

    def stop_all(self) -> None:
        while self.started:
            self.started.pop().stop()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sandbox", "the sandbox API server (sandbox_server fixture)")
    group.addoption("--sandbox-no-kubelet", action="store_true", default=None,
                    help="run sandbox_server without the pod simulator (ini: sandbox_kubelet = false)")
    group.addoption("--sandbox-crds", action="append", default=[], metavar="DIR",
                    help="also register every CRD in DIR on sandbox_server (repeatable; ini: sandbox_crds)")
    parser.addini("sandbox_kubelet", "run the pod simulator in sandbox_server (default true)", type="bool",
                  default=True)
    parser.addini("sandbox_crds", "more CRD directories for sandbox_server, one a line", type="paths", default=[])
    parser.addini("sandbox_sedna_crds", "register Sedna's CRDs on sandbox_server (default true)", type="bool",
                  default=True)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{_MARKER}(**kwargs): SandboxAPIServer options for the function-scoped `sandbox` fixture")


def server_options(config: pytest.Config) -> dict[str, Any]:
    """The ``SandboxAPIServer`` keywords of ``sandbox_server``, from the command line and the ini file."""
    kubelet = not config.getoption("sandbox_no_kubelet") and bool(config.getini("sandbox_kubelet"))
    crd_dirs = [str(d) for d in config.getini("sandbox_crds")] + list(config.getoption("sandbox_crds"))
    crds: list[dict[str, Any]] = []
    if config.getini("sandbox_sedna_crds"):
        from apis.sedna.crds import all_crds

        crds = all_crds()
    return {"kubelet": kubelet, "crd_dirs": crd_dirs, "crds": crds}


@pytest.fixture(scope="session")
def sandbox_server(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """One sandbox API server for the session (see the module doc for its options)."""
    factory = SandboxFactory(tmp_path_factory.mktemp("sandbox"))
    try:
        yield factory(**server_options(pytestconfig))
    finally:
        factory.stop_all()


@pytest.fixture
def sandbox_namespace(sandbox_server: Sandbox) -> Iterator[str]:
    """A namespace of its own on ``sandbox_server`` for this test (``test-<random>``), deleted after it."""
    from apis import Clientset
    from apis.errors import ApiError, is_not_found

    name = f"test-{uuid.uuid4().hex[:10]}"
    with Clientset.from_kubeconfig(sandbox_server.kubeconfig) as cs:
        namespaces = cs.core_v1().namespaces()
        namespaces.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        try:
            yield name
        finally:
            try:
                namespaces.delete(name)
            except ApiError as err:  # deleted by the test already: fine
                if not is_not_found(err):
                    raise


@pytest.fixture
def sandbox_factory(tmp_path: Path) -> Iterator[Callable[..., Sandbox]]:
    """``sandbox_factory(**SandboxAPIServer kwargs)`` → a started ``Sandbox``; every one stops at teardown."""
    factory = SandboxFactory(tmp_path)
    try:
        yield factory
    finally:
        factory.stop_all()


@pytest.fixture
def sandbox(request: pytest.FixtureRequest, sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    """A sandbox API server of this test's own; options from ``@pytest.mark.sandbox(...)``."""
    marker = request.node.get_closest_marker(_MARKER)
    return sandbox_factory(**(marker.kwargs if marker else {}))
