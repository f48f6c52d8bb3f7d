"""The sandbox's pytest plugin used as an outside test author uses it: a test file in a project of its own (no
conftest of ours), run by pytest in a child process with the plugin loaded as its entry point loads it. Both the
official ``kubernetes`` client and our ``apis.Clientset`` talk to ``sandbox_server``, Sedna's CRDs are registered,
and ``sandbox_namespace`` is fresh per test and deleted after it; options come from the ini file, the command line
and the ``sandbox`` marker."""

from __future__ import annotations

import configparser
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration
pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[2]

OUTSIDE_TESTS = '''
from kubernetes import client

from apis.errors import is_not_found

namespaces_seen = []


def test_both_clients_talk_to_the_sandbox(sandbox_server, sandbox_namespace):
    core = client.CoreV1Api(sandbox_server.api_client())
    core.create_namespaced_config_map(sandbox_namespace, {"metadata": {"name": "cm"}, "data": {"k": "v"}})
    cs = sandbox_server.clientset()
    assert cs.core_v1().config_maps(sandbox_namespace).get("cm")["data"] == {"k": "v"}
    dataset = {"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d"},
               "spec": {"url": "s3://bucket/index.txt", "format": "txt", "nodeName": "edge-1"}}
    cs.sedna_v1alpha1().datasets(sandbox_namespace).create(dataset)
    got = client.CustomObjectsApi(sandbox_server.api_client()).get_namespaced_custom_object(
        "sedna.io", "v1alpha1", sandbox_namespace, "datasets", "d")
    assert got["spec"]["nodeName"] == "edge-1"
    crds = client.ApiextensionsV1Api(sandbox_server.api_client()).list_custom_resource_definition().items
    assert {"datasets.sedna.io", "elasticaijobs.elasticdl.org"} <= {crd.metadata.name for crd in crds}
    assert sandbox_server.kubelet is not None
    assert open(sandbox_server.kubeconfig).read().count(sandbox_server.url) == 1
    namespaces_seen.append(sandbox_namespace)


def test_each_test_has_a_fresh_namespace_and_the_last_one_is_deleted(sandbox_server, sandbox_namespace):
    assert namespaces_seen and sandbox_namespace != namespaces_seen[0]
    core = client.CoreV1Api(sandbox_server.api_client())
    assert core.list_namespaced_config_map(sandbox_namespace).items == []
    try:
        phase = core.read_namespace(namespaces_seen[0]).status.phase
    except client.ApiException as err:
        assert err.status == 404
    else:
        assert phase == "Terminating"
'''

OPTIONS_TEST = '''
import pytest
from kubernetes import client


def test_options_apply(sandbox_server):
    assert sandbox_server.kubelet is None
    crds = client.ApiextensionsV1Api(sandbox_server.api_client()).list_custom_resource_definition().items
    assert [crd.metadata.name for crd in crds] == ["things.example.org"]


@pytest.mark.sandbox(kubelet=False)
def test_a_server_of_its_own(sandbox, sandbox_server):
    assert sandbox.url != sandbox_server.url and sandbox.kubelet is None
    assert sandbox.clientset().core_v1().namespaces().get("default")["metadata"]["name"] == "default"
'''

THING_CRD = '''
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.org}
spec:
  group: example.org
  scope: Namespaced
  names: {plural: things, singular: thing, kind: Thing}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
'''


@pytest.fixture
def outside(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A project directory of its own; the child pytest imports this tree (as an installed package would be)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # ``-p sandbox.pytest_plugin`` is what the pytest11 entry point does (a no-op where the package is installed)
    return pytester.runpytest_subprocess("-p", "sandbox.pytest_plugin", "-p", "no:cacheprovider", *args,
                                         timeout=120)


def test_an_outside_test_uses_sandbox_server_with_both_clients(outside: pytest.Pytester) -> None:
    outside.makepyfile(test_outside=OUTSIDE_TESTS)
    result = run(outside, "-q")
    result.assert_outcomes(passed=2)


def test_options_come_from_the_ini_file_the_command_line_and_the_marker(outside: pytest.Pytester) -> None:
    (outside.path / "crds").mkdir()
    (outside.path / "crds" / "thing.yaml").write_text(THING_CRD)
    outside.makeini("[pytest]\nsandbox_sedna_crds = false\nsandbox_crds = crds\n")
    outside.makepyfile(test_options=OPTIONS_TEST)
    result = run(outside, "-q", "--sandbox-no-kubelet")
    result.assert_outcomes(passed=2)


def test_the_plugin_is_an_entry_point_named_after_its_module() -> None:
    """pip installs it for any project; named as the module so that our conftest's ``pytest_plugins`` line and the
    entry point register it once."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "setup.cfg")
    entries = [line.strip() for line in cfg["options.entry_points"]["pytest11"].splitlines() if line.strip()]
    assert entries == ["sandbox.pytest_plugin = sandbox.pytest_plugin"]
    assert "sandbox.*" in cfg["options.packages.find"]["include"].split()
