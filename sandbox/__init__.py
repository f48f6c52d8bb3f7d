"""The sandbox: a Kubernetes API server without a cluster, for tests, demos and local runs.

Parts: ``apiserver`` (``SandboxAPIServer``: an ``apis.fake.ObjectTracker`` behind the Kubernetes HTTP API),
``simulator`` (``PodSimulator``: one loop that plays the scheduler, the kubelets (``kubelet``) and the built-in
Deployment and ReplicaSet controllers (``controllers``) on the tracker), ``steering`` (the ``sandbox.sedna.io/*``
annotations that steer simulated pods), ``faults`` (fault injection), ``cli`` (``python -m sandbox``) and
``pytest_plugin`` (fixtures for test authors). See docs/sandbox.md.

It builds on ``apis`` and is imported only by tests, ``hack/`` and test fixtures, never by the programs or by
``workersim`` (test/unit/test_library_rules.py checks it). The names below are imported on first use, so that
loading the pytest plugin (in every pytest run of a project that installs this package) stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Faults", "PodSimulator", "SandboxAPIServer"]

_HOMES = {"Faults": "sandbox.faults", "PodSimulator": "sandbox.simulator", "SandboxAPIServer": "sandbox.apiserver"}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
