"""The sandbox's OpenAPI v3 and v2 documents: ``kubectl explain`` for built-in kinds and CRDs (also ones registered
at run time), kubectl's server-side field validation and strategic-merge apply computed from them, raw documents."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_http import RawClient
from testkit.kubectl import MAIN_KUBECTL, VERSIONED, Kubectl, requires_kubectl

from apis.resources import DEPLOYMENTS

pytestmark = [pytest.mark.integration, pytest.mark.sandbox(kubelet=False, crd_dirs=["charts/sedna/crds"])]

WIDGET_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        description: A widget for tests.
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, description: How big the widget is.}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: two}
spec:
  selector: {matchLabels: {app: two}}
  template:
    metadata: {labels: {app: two}}
    spec:
      containers:
      - {name: a, image: nginx, env: [{name: KEEP, value: "1"}, {name: DROP, value: "2"}]}
      - {name: b, image: envoy}
"""


@pytest.fixture
def kubectl(sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")


@requires_kubectl
def test_explain_built_in_kinds(kubectl: Kubectl) -> None:
    out = kubectl("explain", "pods.spec.containers").stdout
    assert "KIND:       Pod" in out and "VERSION:    v1" in out
    assert "FIELD: containers <[]Container>" in out
    assert "image\t<string>" in out and "resources\t<ResourceRequirements>" in out
    limits = kubectl("explain", "pods.spec.containers.resources").stdout
    assert "limits\t<map[string]Quantity>" in limits
    deployment = kubectl("explain", "deployment.spec.strategy").stdout
    assert "GROUP:      apps" in deployment and "rollingUpdate\t<RollingUpdateDeployment>" in deployment
    events = kubectl("explain", "events", "--api-version=events.k8s.io/v1").stdout
    assert "GROUP:      events.k8s.io" in events and "regarding\t<ObjectReference>" in events


@requires_kubectl
def test_explain_sedna_kinds_and_crds_registered_at_run_time(kubectl: Kubectl) -> None:
    out = kubectl("explain", "ji.spec.edgeWorker").stdout
    assert "GROUP:      sedna.io" in out and "KIND:       JointInferenceService" in out
    assert "FIELD: edgeWorker <Object>" in out and "hardExampleMining\t<Object> -required-" in out
    recursive = kubectl("explain", "incrementallearningjobs", "--recursive").stdout
    assert "KIND:       IncrementalLearningJob" in recursive and "metadata\t<ObjectMeta>" in recursive
    assert "    trainSpec\t<Object>" in recursive and "      trigger\t<Object>" in recursive

    assert kubectl("explain", "widgets", check=False).returncode != 0
    kubectl.apply(WIDGET_CRD)
    kubectl.wait_for_resource("widgets")
    widget = kubectl("explain", "widgets.spec.size").stdout
    assert "KIND:       Widget" in widget and "FIELD: size <integer>" in widget and "How big the widget is." in widget


@requires_kubectl
def test_explain_from_the_protobuf_v2_document(kubectl: Kubectl) -> None:
    out = kubectl("explain", "pods.spec.containers", "--output=plaintext-openapiv2").stdout
    assert "RESOURCE: containers <[]Object>" in out and "List of containers belonging to the pod." in out
    recursive = kubectl("explain", "deploy", "--recursive", "--output=plaintext-openapiv2").stdout
    assert "VERSION:  apps/v1" in recursive and "      labels\t<map[string]string>" in recursive
    sedna = kubectl("explain", "ji.spec.edgeWorker", "--output=plaintext-openapiv2").stdout
    assert "RESOURCE: edgeWorker <Object>" in sedna and "hardExampleMining\t<Object> -required-" in sedna


@pytest.mark.skipif(not VERSIONED, reason="no versioned kubectl.1.* binaries")
def test_explain_with_the_oldest_versioned_kubectl(sandbox, tmp_path: Path) -> None:
    k = Kubectl(VERSIONED[0], sandbox.kubeconfig, tmp_path / "cache-old")
    out = k("explain", "svc.spec.ports").stdout
    assert "FIELD: ports <[]ServicePort>" in out and "targetPort\t<string>" in out


@requires_kubectl
def test_apply_computes_strategic_merge_patches_and_validates_on_the_server(sandbox, kubectl: Kubectl) -> None:
    kubectl.apply(DEPLOYMENT)
    shrunk = DEPLOYMENT.replace("      - {name: b, image: envoy}\n", "").replace(', {name: DROP, value: "2"}', "")
    result = kubectl("apply", "-f", "-", "-v=8", stdin=shrunk)
    assert "$setElementOrder/containers" in result.stderr  # the patch was computed from the v3 schemas
    [container] = sandbox.tracker.get(DEPLOYMENTS, "default", "two")["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "a" and container["env"] == [{"name": "KEEP", "value": "1"}]

    bad = kubectl("create", "-f", "-", check=False, stdin=(
        "apiVersion: sedna.io/v1alpha1\nkind: Dataset\nmetadata: {name: ds}\n"
        "spec: {url: /data/x.txt, format: txt, nodeName: n1, bogus: 1}\n"))
    assert bad.returncode != 0 and 'strict decoding error: unknown field "spec.bogus"' in bad.stderr


def test_documents_over_raw_http(sandbox) -> None:
    http = RawClient(sandbox.url)
    index = http.get("/openapi/v3").json()["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/sedna.io/v1alpha1", "apis/events.k8s.io/v1", "apis/batch/v1"} <= set(index)
    apps = http.get(index["apis/apps/v1"]["serverRelativeURL"]).json()
    deployment = apps["components"]["schemas"]["v1.Deployment"]
    assert deployment["x-kubernetes-group-version-kind"] == [{"group": "apps", "version": "v1", "kind": "Deployment"}]
    patch = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["put"]
    assert scale["x-kubernetes-group-version-kind"]["kind"] == "Scale"
    containers = apps["components"]["schemas"]["v1.PodSpec"]["properties"]["containers"]
    assert containers["x-kubernetes-patch-merge-key"] == "name" and containers["x-kubernetes-patch-strategy"] == "merge"

    sedna = http.get(index["apis/sedna.io/v1alpha1"]["serverRelativeURL"]).json()
    ji = sedna["components"]["schemas"]["io.sedna.v1alpha1.JointInferenceService"]
    assert ji["properties"]["metadata"]["allOf"] == [{"$ref": "#/components/schemas/v1.ObjectMeta"}]
    assert "v1.ObjectMeta" in sedna["components"]["schemas"]
    ji_patch = sedna["paths"]["/apis/sedna.io/v1alpha1/namespaces/{namespace}/jointinferenceservices/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in ji_patch["requestBody"]["content"]

    http.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "gadgets", "kind": "Gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": {"type": "object"}}}]}})
    assert "apis/example.com/v1" in http.get("/openapi/v3").json()["paths"]

    v2 = http.get("/openapi/v2").json()
    assert v2["swagger"] == "2.0" and v2["definitions"]["v1.Pod"]["x-kubernetes-group-version-kind"][0]["kind"] == "Pod"
    assert v2["definitions"]["resource.Quantity"]["type"] == "string"
    assert "/apis/example.com/v1/gadgets/{name}" in v2["paths"]
    assert v2["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]["consumes"][-1] == (
        "application/strategic-merge-patch+json")
