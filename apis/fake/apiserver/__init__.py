"""The sandbox API server: an ``ObjectTracker`` behind the Kubernetes HTTP API, for the ``kubernetes`` package,
``kubectl`` and our own clientset, without a cluster.

    server = SandboxAPIServer(crd_dirs=["charts/sedna/crds"]).start()
    server.write_kubeconfig("/tmp/kubeconfig")
    ...
    server.stop()

or ``python -m apis.fake.apiserver --port 0 --kubeconfig-out /tmp/kubeconfig`` (prints ``listening on <url>``).
Serves discovery, OpenAPI v2/v3, CRUD, status and scale subresources, merge/json/strategic/apply patches,
pagination, ``?watch=1`` streams, Tables and CRD registration; optional fault injection (``apis.fake.faults``) and
a pod-lifecycle simulator (``apis.fake.kubelet``). Plain HTTP, no authentication (any bearer token is accepted).

Its parts: ``server`` (lifecycle, connections), ``handler`` (HTTP plumbing, routing), ``admission``
(NamespaceLifecycle), ``request`` and ``options`` (parsing), ``endpoints`` (the REST verbs), ``subresources``
(scale), ``podlogs`` (pods/log from a directory), ``eventsv1``, ``watchstream``, ``wire`` (Status on the wire),
``discovery``, ``openapi`` and ``openapi_proto``, ``tables`` and ``printers`` (``printers_workloads``, ``columns``,
``jsonpath`` for CRD printer columns); the CLI is ``__main__``.
"""

from typing import Any

from .server import DEFAULT_NAMESPACES, SANDBOX_TOKEN, SandboxAPIServer, load_crd_files

__all__ = ["DEFAULT_NAMESPACES", "SANDBOX_TOKEN", "SandboxAPIServer", "load_crd_files", "main"]


def __getattr__(name: str) -> Any:
    # ``main`` lives in ``__main__`` (run by ``python -m apis.fake.apiserver``); imported lazily so that running it
    # does not import that module twice.
    if name == "main":
        from .__main__ import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
