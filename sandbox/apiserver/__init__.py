"""The sandbox API server: an ``ObjectTracker`` behind the Kubernetes HTTP API, for the ``kubernetes`` package,
``kubectl`` and our own clientset, without a cluster.

    server = SandboxAPIServer(crd_dirs=["charts/sedna/crds"]).start()
    server.write_kubeconfig("/tmp/kubeconfig")
    ...
    server.stop()

or ``python -m sandbox --port 0 --kubeconfig-out /tmp/kubeconfig`` (prints ``listening on <url>``).
Serves discovery, OpenAPI v2/v3, CRUD, status and scale subresources, merge/json/strategic/apply patches,
pagination, ``?watch=1`` streams, Tables and CRD registration; optional fault injection (``sandbox.faults``) and
a pod-lifecycle simulator (``sandbox.simulator``). Plain HTTP, no authentication (any bearer token is accepted).

Its parts: ``server`` (lifecycle, connections), ``handler`` (HTTP plumbing, routing), ``admission``
(NamespaceLifecycle), ``request`` and ``options`` (parsing), ``endpoints`` (the REST verbs), ``subresources``
(scale), ``podlogs`` (pods/log from a directory), ``eventsv1``, ``watchstream``, ``wire`` (Status on the wire),
``discovery``, ``openapi`` and ``openapi_proto``, ``tables`` and ``printers`` (``printers_workloads``, ``columns``,
``jsonpath`` for CRD printer columns); the CLI is ``sandbox.cli``.
"""

from .server import DEFAULT_NAMESPACES, SANDBOX_TOKEN, SandboxAPIServer, load_crd_files

__all__ = ["DEFAULT_NAMESPACES", "SANDBOX_TOKEN", "SandboxAPIServer", "load_crd_files"]
