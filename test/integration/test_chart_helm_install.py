"""``helm install`` and ``helm upgrade`` of the chart by Helm's own Go SDK (helm-python-sdk) against the sandbox API
server: Helm installs the CRDs from ``crds/`` and creates every object through the API; an upgrade keeps the
generated edge token (the chart's ``lookup`` finds the installed Secret) and leaves the pods' edge checksum alone; a
rotation (a new ``edge.token.value``) changes the Secret and the checksum on both pod templates, so both roll.

Helm keeps its release records in memory here (``storage_driver="memory"``): its Secret driver writes protobuf,
which the sandbox does not decode."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from testkit.chart import CHART, helm

from apis.clientset import Clientset
from apis.resources import CUSTOM_RESOURCE_DEFINITIONS, DAEMON_SETS, DEPLOYMENTS, SECRETS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False)]


def _edge_checksums(cs: Clientset) -> tuple[str, str]:
    gm = cs.resource(DEPLOYMENTS, "sedna").get("sedna-gm")
    lc = cs.resource(DAEMON_SETS, "sedna").get("sedna-lc")
    return tuple(w["spec"]["template"]["metadata"]["annotations"]["checksum/edge"] for w in (gm, lc))  # type: ignore[return-value]


def _token(cs: Clientset) -> str:
    return base64.b64decode(cs.resource(SECRETS, "sedna").get("sedna-edge-token")["data"]["token"]).decode()


def test_install_upgrade_and_token_rotation(sandbox) -> None:
    engine = helm()
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    values: dict[str, Any] = {"image": {"repository": "registry.example.com/sedna-controlplane"}}
    with engine.Config(kubeconfig_path=sandbox.kubeconfig, namespace="sedna", storage_driver="memory") as cfg:
        release = cfg.install(str(CHART), "sedna", values, namespace="sedna", create_namespace=True, timeout=60)
        assert release["status"] == "deployed"
        crds = {c["metadata"]["name"] for c in cs.resource(CUSTOM_RESOURCE_DEFINITIONS).list()["items"]}
        assert {"jointinferenceservices.sedna.io", "elasticaijobs.elasticdl.org"} <= crds
        token, checksums = _token(cs), _edge_checksums(cs)
        assert len(token) == 48

        release = cfg.upgrade(str(CHART), "sedna", {**values, "gm": {"replicas": 3}}, namespace="sedna", timeout=60)
        assert release["status"] == "deployed" and release["revision"] == 2
        assert cs.resource(DEPLOYMENTS, "sedna").get("sedna-gm")["spec"]["replicas"] == 3
        assert _token(cs) == token  # kept
        assert _edge_checksums(cs) == checksums  # nothing to roll for the edge link

        rotated = "n3w-t0ken-" + "x" * 30
        cfg.upgrade(str(CHART), "sedna", {**values, "edge": {"token": {"value": rotated}}}, namespace="sedna",
                    timeout=60)
        assert _token(cs) == rotated
        new = _edge_checksums(cs)
        assert new[0] == new[1] != checksums[0]  # both the GMs and the LCs roll
    cs.close()
