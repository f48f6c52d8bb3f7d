"""ElasticAIJob spec parsing/validation and the master pod builder."""

from __future__ import annotations

import pytest

from globalmanager.controllers.elasticdl.pods import build_master_pod, master_command, shell_quote
from globalmanager.controllers.elasticdl.spec import (
    SpecError,
    parse_job_args,
    parse_priority,
    parse_resources,
    parse_spec,
    parse_volumes,
)


def test_resources_parse_and_map_gpu():
    assert parse_resources("cpu=1,memory=1024Mi,gpu=1", "f") == {"cpu": "1", "memory": "1024Mi", "nvidia.com/gpu": "1"}
    assert parse_resources(" cpu=250m , disk=10Gi, amd.com/gpu=2 ", "f") == {
        "cpu": "250m", "ephemeral-storage": "10Gi", "amd.com/gpu": "2"}
    assert parse_resources("", "f") == {}


@pytest.mark.parametrize("text", ["cpu", "cpu=x", "memory=12XB", "gpu=0.5", "cpu=1,cpu=2", "foo=1", "cpu=-1", 7])
def test_bad_resources_name_the_field(text):
    with pytest.raises(SpecError) as info:
        parse_resources(text, "spec.worker.resource_request")
    assert info.value.field == "spec.worker.resource_request"


def test_volumes():
    vols = parse_volumes("host_path=/data,mount_path=/data;claim_name=c1,mount_path=/out,sub_path=x", "f")
    assert [(v.host_path, v.claim_name, v.mount_path, v.sub_path) for v in vols] == [
        ("/data", "", "/data", ""), ("", "c1", "/out", "x")]
    for bad in ("host_path=/d", "mount_path=/d", "host_path=/a,claim_name=c,mount_path=/d", "foo=1,mount_path=/d",
                "host_path=/d,mount_path=rel", "host_path=/d,host_path=/e,mount_path=/d"):
        with pytest.raises(SpecError):
            parse_volumes(bad, "f")


def test_job_args():
    args = parse_job_args(["--model_zoo /model_zoo", "--model_params 'a=1; b=2'", "--x  y z"])
    assert [(a.flag, a.value) for a in args] == [("model_zoo", "/model_zoo"), ("model_params", "a=1; b=2"), ("x", "y z")]
    for bad, field in ((["--flag"], "spec.jobArgs[0]"), (["ok 1"], "spec.jobArgs[0]"), (["--a 1", "--a 2"], "spec.jobArgs[1]"),
                       ([3], "spec.jobArgs[0]"), ("--a 1", "spec.jobArgs"), (["--a 'x"], "spec.jobArgs[0]")):
        with pytest.raises(SpecError) as info:
            parse_job_args(bad)
        assert info.value.field == field


def test_priority():
    assert parse_priority("high=0.5", "f", allow_fraction=True) == "high=0.5"
    for bad, frac in (("high=0.5", False), ("high=2", True), ("High", True), ("a=b", True)):
        with pytest.raises(SpecError):
            parse_priority(bad, "f", allow_fraction=frac)


def test_reserved_flags_and_required_fields():
    base = {"metadata": {"name": "j", "namespace": "ns"}}
    with pytest.raises(SpecError, match=r"spec.jobArgs\[0\]: --num_workers is set by the controller"):
        parse_spec({**base, "spec": {"master": {"image": "i"}, "worker": {"count": 1}, "jobArgs": ["--num_workers 3"]}})
    with pytest.raises(SpecError, match="spec.master: is required"):
        parse_spec({**base, "spec": {}})
    with pytest.raises(SpecError, match=r"spec.ps.count: must be an integer"):
        parse_spec({**base, "spec": {"master": {"image": "i"}, "ps": {"count": "2"}}})
    # camelCase field names are accepted too
    spec = parse_spec({**base, "spec": {"master": {"image": "i", "resourceRequest": "cpu=1"}}})
    assert spec.master.requests == {"cpu": "1"}


def test_master_pod_mirrors_the_client_tool():
    job = {
        "apiVersion": "elasticdl.org/v1alpha1", "kind": "ElasticAIJob",
        "metadata": {"name": "test-mnist", "namespace": "default", "uid": "u", "generation": 3},
        "spec": {
            "jobArgs": ["--minibatch_size 64", "--model_def \"it's.model\""],
            "master": {"image": "elasticdl:test", "priority": "high", "resource_request": "cpu=0.2,memory=1024Mi",
                       "resource_limit": "cpu=1,memory=2048Mi", "volume": "host_path=/data,mount_path=/data"},
            "worker": {"count": 2, "image": "w:1", "priority": "high=0.5", "resource_request": "cpu=1,gpu=1"},
            "ps": {"count": 1, "resource_request": "cpu=1"},
        },
    }
    spec = parse_spec(job)
    cmd = master_command(job, spec)[2]
    assert cmd.startswith("set -o pipefail; python -m elasticdl.python.master.main --minibatch_size '64' ")
    assert "--model_def " + shell_quote("it's.model") in cmd
    for part in ("--job_name 'test-mnist'", "--namespace 'default'", "--num_workers '2'", "--worker_image 'w:1'",
                 "--worker_resource_request 'cpu=1,gpu=1'", "--worker_resource_limit 'cpu=1,gpu=1'",
                 "--worker_pod_priority 'high=0.5'", "--num_ps_pods '1'", "--ps_resource_request 'cpu=1'",
                 "--master_resource_request 'cpu=0.2,memory=1024Mi'", "--volume 'host_path=/data,mount_path=/data'"):
        assert part in cmd
    pod = build_master_pod(job, spec)
    assert pod["metadata"]["name"] == "elasticdl-test-mnist-master"
    assert pod["metadata"]["annotations"]["elasticdl.org/job-generation"] == "3"
    assert pod["spec"]["priorityClassName"] == "high" and pod["spec"]["restartPolicy"] == "Never"
    c = pod["spec"]["containers"][0]
    assert c["resources"] == {"requests": {"cpu": "0.2", "memory": "1024Mi"}, "limits": {"cpu": "1", "memory": "2048Mi"}}
    assert pod["spec"]["volumes"] == [{"name": "elasticdl-test-mnist-master-volume-0", "hostPath": {"path": "/data"}}]
    assert c["volumeMounts"] == [{"name": "elasticdl-test-mnist-master-volume-0", "mountPath": "/data"}]
    assert c["env"][0]["name"] == "MY_POD_IP"
    assert shell_quote("it's") == "'it'\"'\"'s'"
