"""Fixtures for e2e tests: ``procs`` (real child processes, killed at teardown) and ``cluster`` (a sandbox API server
process with Sedna's CRDs, a clientset for it, and the ``sedna`` namespace the chart would create); ``module_procs``
and ``module_cluster`` are the same, shared by the tests of one module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import Processes, start_sandbox

from apis.clientset import Clientset


def _processes(tmp: Path) -> Iterator[Processes]:
    p = Processes(tmp)
    yield p
    p.cleanup()


def _cluster(procs: Processes, tmp: Path) -> Iterator[tuple[str, Clientset]]:
    kubeconfig = tmp / "kubeconfig"
    # pods run at once: no e2e test here is about the kubelet's start-up time (the sandbox's 1 s default; the interop
    # suite keeps it, and a test may still ask for a delay with the pod annotation sandbox.sedna.io/start-delay-seconds)
    start_sandbox(procs, kubeconfig, "--pod-start-delay", "0")
    cs = Clientset.from_kubeconfig(str(kubeconfig))
    cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sedna"}})
    yield str(kubeconfig), cs
    cs.close()


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Processes]:
    yield from _processes(tmp_path)


@pytest.fixture
def cluster(procs: Processes, tmp_path: Path) -> Iterator[tuple[str, Clientset]]:
    yield from _cluster(procs, tmp_path)


@pytest.fixture(scope="module")
def module_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("e2e")


@pytest.fixture(scope="module")
def module_procs(module_tmp: Path) -> Iterator[Processes]:
    yield from _processes(module_tmp)


@pytest.fixture(scope="module")
def module_cluster(module_procs: Processes, module_tmp: Path) -> Iterator[tuple[str, Clientset]]:
    yield from _cluster(module_procs, module_tmp)
