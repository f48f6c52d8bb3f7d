"""A real kubectl against the sandbox API server: CRD + CR apply (client- and server-side), get, delete.

Versioned binaries (``kubectl.1.27`` … ``kubectl.1.33``, see ``testkit.kubectl``) are also exercised, oldest and
newest, with a shorter flow.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from testkit.kubectl import MAIN_KUBECTL, VERSIONED, Kubectl, requires_kubectl, version_key

pytestmark = pytest.mark.integration

CRD_YAML = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string}
"""

CR_YAML = """\
apiVersion: example.com/v1
kind: Widget
metadata: {name: w1, labels: {team: a}}
spec: {size: SIZE, color: red}
"""

POD_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec:
  containers: [{name: main, image: busybox}]
"""


def _kubectl(binary: str, sandbox, tmp_path: Path) -> Kubectl:
    return Kubectl(binary, sandbox.kubeconfig, tmp_path / f"cache-{os.path.basename(binary)}")


@requires_kubectl
def test_kubectl_version_and_api_resources(sandbox, tmp_path: Path) -> None:
    k = _kubectl(MAIN_KUBECTL, sandbox, tmp_path)
    version = json.loads(k("version", "-o", "json").stdout)
    assert version["serverVersion"]["gitVersion"].endswith("-sandbox")
    resources = k("api-resources").stdout
    assert re.search(r"^pods\s+po\s+v1\s+true\s+Pod$", resources, re.M)
    assert re.search(r"^deployments\s+deploy\s+apps/v1\s+true\s+Deployment$", resources, re.M)
    assert "customresourcedefinitions" in resources


@requires_kubectl
def test_kubectl_crd_cr_apply_get_delete(sandbox, tmp_path: Path) -> None:
    k = _kubectl(MAIN_KUBECTL, sandbox, tmp_path)
    assert "created" in k.apply(CRD_YAML)
    k.wait_for_resource("widgets")

    assert "widget.example.com/w1 created" in k.apply(CR_YAML.replace("SIZE", "3"))
    got = json.loads(k("get", "widget", "w1", "-o", "json").stdout)
    assert got["spec"] == {"size": 3, "color": "red"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in got["metadata"]["annotations"]

    # Client-side apply of a change: a JSON merge patch for a custom resource.
    assert "configured" in k.apply(CR_YAML.replace("SIZE", "5"))
    assert json.loads(k("get", "wd", "w1", "-o", "json").stdout)["spec"]["size"] == 5
    table = k("get", "widgets").stdout.splitlines()
    assert table[0].split() == ["NAME", "SIZE"] and table[1].split() == ["w1", "5"]

    # Server-side apply.
    assert "serverside-applied" in k.apply(CR_YAML.replace("SIZE", "7"), "--server-side")
    assert json.loads(k("get", "wd", "w1", "-o", "json").stdout)["spec"]["size"] == 7

    # Invalid object: rejected with the schema error.
    bad = k("apply", "-f", "-", stdin=CR_YAML.replace("SIZE", "0").replace("w1", "w2"), check=False)
    assert bad.returncode != 0 and "spec.size" in bad.stderr

    # Built-in kind: create, strategic-merge apply of a change, pods listed by the server-side Table.
    assert "pod/p1 created" in k.apply(POD_YAML)
    assert "configured" in k.apply(POD_YAML.replace("{name: p1}", "{name: p1, labels: {tier: web}}"))
    pod = json.loads(k("get", "pod", "p1", "-o", "json").stdout)
    assert pod["metadata"]["labels"] == {"tier": "web"}
    header = k("get", "pods").stdout.splitlines()[0].split()
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]

    assert 'widget.example.com "w1" deleted' in k("delete", "widget", "w1").stdout
    assert k("get", "widgets", "-o", "json").stdout and json.loads(k("get", "widgets", "-o", "json").stdout)["items"] == []
    assert 'pod "p1" deleted' in k("delete", "-f", "-", stdin=POD_YAML).stdout
    missing = k("get", "pod", "p1", check=False)
    assert missing.returncode != 0 and 'pods "p1" not found' in missing.stderr


@pytest.mark.parametrize(
    "binary", sorted({VERSIONED[0], VERSIONED[-1]}, key=version_key) if VERSIONED else [], ids=os.path.basename
)
def test_versioned_kubectl_apply_flow(binary: str, sandbox, tmp_path: Path) -> None:
    k = _kubectl(binary, sandbox, tmp_path)
    k("version")
    k.apply(CRD_YAML)
    k.wait_for_resource("widgets")
    k.apply(CR_YAML.replace("SIZE", "3"))
    assert "configured" in k.apply(CR_YAML.replace("SIZE", "4"))
    assert json.loads(k("get", "widget", "w1", "-o", "json").stdout)["spec"]["size"] == 4
    k.apply(POD_YAML)
    assert k("get", "pods", "-o", "name").stdout.split() == ["pod/p1"]
    k("delete", "widget", "w1")


@requires_kubectl
@pytest.mark.sandbox(kubelet=False)  # no simulated kubelet writing pod status behind the test's back
def test_kubectl_server_dry_run_persists_nothing(sandbox, tmp_path: Path) -> None:
    k = _kubectl(MAIN_KUBECTL, sandbox, tmp_path)
    rv = sandbox.tracker.resource_version()
    created = json.loads(k("create", "-f", "-", "--dry-run=server", "-o", "json", stdin=POD_YAML).stdout)
    assert created["metadata"]["name"] == "p1" and created["metadata"]["uid"]
    assert "pod/p1 created (server dry run)" in k.apply(POD_YAML, "--dry-run=server")
    assert "serverside-applied (server dry run)" in k.apply(POD_YAML, "--server-side", "--dry-run=server")
    assert sandbox.tracker.resource_version() == rv
    assert k("get", "pods", "-o", "name").stdout.split() == []

    k("create", "-f", "-", stdin=POD_YAML)
    rv = sandbox.tracker.resource_version()
    assert 'pod "p1" deleted (server dry run)' in k("delete", "pod", "p1", "--dry-run=server").stdout
    rejected = k("create", "-f", "-", "--dry-run=server", stdin=POD_YAML, check=False)
    assert rejected.returncode != 0 and "already exists" in rejected.stderr
    assert k("get", "pods", "-o", "name").stdout.split() == ["pod/p1"]
    assert sandbox.tracker.resource_version() == rv
