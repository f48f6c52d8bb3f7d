"""Fixtures for e2e tests: ``procs`` (real child processes, killed at teardown) and ``cluster`` (a sandbox API
server process with Sedna's CRDs, a clientset for it, and the ``sedna`` namespace the chart would create)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import Processes, start_sandbox

from apis.clientset import Clientset


@pytest.fixture
def procs(tmp_path: Path) -> Iterator[Processes]:
    p = Processes(tmp_path)
    yield p
    p.cleanup()


@pytest.fixture
def cluster(procs: Processes, tmp_path: Path) -> Iterator[tuple[str, Clientset]]:
    kubeconfig = tmp_path / "kubeconfig"
    start_sandbox(procs, kubeconfig)
    cs = Clientset.from_kubeconfig(str(kubeconfig))
    cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sedna"}})
    yield str(kubeconfig), cs
    cs.close()
