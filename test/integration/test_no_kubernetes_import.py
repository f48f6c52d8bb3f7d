"""The long-running programs (``sedna-gm`` with leader election, ``sedna-lc`` connected to it) never import the
``kubernetes`` package: ``sedna-gm`` has its kubeconfig read in a short-lived child process (``apis.kubeconfig``).
Checked with ``PYTHONPROFILEIMPORTTIME``: every module a process imports is a line on its stderr.

The sandbox API server (a test double, not shipped) does import it: its OpenAPI schemas of built-in kinds are
derived from the package's generated models (``apis.fake.schemas``)."""

from __future__ import annotations

import re

import pytest
from testkit import gm_edge_address, http_get, start_gm, start_lc, start_sandbox, wait_for

from apis.clientset import Clientset

pytestmark = pytest.mark.integration

# "import time:  self [us] | cumulative | imported package" lines of the process itself (a JSON log line that
# quotes one does not start with "import time:")
KUBERNETES_IMPORT = re.compile(r"^import time:[^|\n]*\|[^|\n]*\|\s*kubernetes(\.\S*)?\s*$", re.MULTILINE)
ANY_IMPORT = re.compile(r"^import time:[^|\n]*\|[^|\n]*\|\s*apis\s*$", re.MULTILINE)


def test_sandbox_gm_and_lc_run_without_the_kubernetes_package(procs, tmp_path):
    procs.env["PYTHONPROFILEIMPORTTIME"] = "1"
    kubeconfig = tmp_path / "kubeconfig"
    start_sandbox(procs, kubeconfig)
    with Clientset.from_kubeconfig(str(kubeconfig)) as client:  # the leader election lease's namespace
        client.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "sedna"}})
    start_gm(procs, "gm", str(kubeconfig), wait=True, timeout=60)
    lc, lc_url = start_lc(procs, "node-1", gm_edge_address(procs), tmp_path / "node-1")
    wait_for("sedna-lc connected", lambda: http_get(lc_url + "/readyz")[0] == 200 or lc.poll() is not None,
             timeout=30)
    assert lc.poll() is None, procs.log("node-1")
    assert '"event": "the kubeconfig loader reported a problem"' not in procs.log("gm")
    for name in ("gm", "node-1"):
        log = procs.log(name)
        assert ANY_IMPORT.search(log), f"{name}: no import-time lines: the check would see nothing"
        assert not KUBERNETES_IMPORT.findall(log), f"{name} imported kubernetes"
