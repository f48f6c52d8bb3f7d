"""Sedna's worker contract in the runtime: names and label values, storage (host paths, the storage initializer,
S3 credentials), the credential annotation, worker params and model hot update, Deployments, Services, HPAs,
metrics, indexes."""

from __future__ import annotations

import json

import pytest

from apis import meta
from apis.fake import FakeClientset
from globalmanager.runtime import (
    ModelHotUpdate,
    MountURL,
    WorkerMount,
    WorkerParam,
    build_s3_secret_envs,
    convert_k8s_valid_name,
    convert_map_to_metrics,
    deployment_available,
    deployment_failure,
    deployment_from_template,
    edge_mesh_service,
    edge_mesh_service_host,
    generate_labels,
    generate_selector,
    label_value,
    merge_secret_envs,
    new_hpa,
    pod_from_template,
    service_name_error,
    with_credential,
)
from globalmanager.runtime.indexes import CONTROLLER_UID_INDEX, controller_uid_index_func, ensure_index
from globalmanager.runtime.names import is_label_value
from globalmanager.runtime.status import go_json
from informers import SharedInformerFactory

IL = {"apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob",
      "metadata": {"name": "j", "namespace": "default", "uid": "u-1"}}
SECRET = {"metadata": {"name": "s", "annotations": {"s3-endpoint": "s3.local"}},
          "data": {"ACCESS_KEY_ID": "YWs=", "SECRET_ACCESS_KEY": "c2s="}}  # ak, sk


# -- names -------------------------------------------------------------------------------------------------------------
def test_label_values_from_long_names_are_valid_stable_and_distinct():
    assert label_value("ji-1.a_b") == "ji-1.a_b"
    long_a, long_b = "a" * 64, "a" * 63 + "b"
    for value in (long_a, long_b, "x" * 253, "a" * 52 + "-----------z"):
        hashed = label_value(value)
        assert is_label_value(hashed) and len(hashed) <= 63
        assert label_value(value) == hashed
    assert label_value(long_a) != label_value(long_b)
    assert label_value(long_a).startswith("a" * 52 + "-")


def test_generate_labels_and_selector_with_a_253_character_name():
    job = {**IL, "metadata": {**IL["metadata"], "name": "n" * 253}}
    labels = generate_labels(job, "Train")
    assert all(is_label_value(v) for v in labels.values())
    assert labels["incrementallearningjob.sedna.io/worker-type"] == "train"
    assert generate_selector(job).matches(labels)


@pytest.mark.parametrize(("name", "expected"), [
    ("/models/little/", "models-littlez"), ("/data", "data"), ("ABC_def.ghi", "abc-def-ghi"), ("", ""),
    ("a//b", "a-b"), ("x" * 70, "x" * 63), ("-lead", "-lead"), ("é", ""), ("aé-b", "a--b"),
])
def test_convert_k8s_valid_name_is_sednas(name, expected):
    assert convert_k8s_valid_name(name) == expected


# -- storage ---------------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("mount", "container", "host", "src", "dst", "disabled"), [
    (MountURL("s3://bucket/dir/m.pb", download_by_initializer=True), "/downloads/bucket/dir/m.pb", "", "s3://bucket/dir/m.pb", "/downloads/bucket/dir/", False),
    (MountURL("https://h:8/a/b.zip", download_by_initializer=True), "/downloads/h:8/a/b.zip", "", "https://h:8/a/b.zip", "/downloads/h:8/a/", False),
    (MountURL("s3://bucket/out"), "", "", "", "", False),
    (MountURL("/data/train.txt"), "/home/data/data/train.txt", "/data/", "", "", False),
    (MountURL("/data/dir", is_dir=True), "/home/data/data/dir", "/data/dir", "", "", False),
    (MountURL("/data/index.txt", indirect=True), "/downloads/data/index.txt", "/data/", "/home/data/data/index.txt", "/downloads/data/", False),
    (MountURL("s3://b/k", enable_if_host_path=True), "", "", "", "", True),
])
def test_mount_url_parse(mount, container, host, src, dst, disabled):
    mount.parse()
    assert (mount.container_path, mount.host_path, mount.download_src_url, mount.download_dst_dir, mount.disable) == (
        container, host, src, dst, disabled)


def test_storage_initializer_host_paths_and_secrets_in_a_pod():
    param = WorkerParam("train", mounts=[
        WorkerMount(url=MountURL("s3://b/model.pb", secret=SECRET, download_by_initializer=True), env_name="MODEL_URL"),
        WorkerMount(url=MountURL("s3://b/out", secret=SECRET), env_name="OUTPUT_URL"),
        WorkerMount(urls=[MountURL("/data/a.txt"), MountURL("/data/b.txt")], env_name="DATA_URLS"),
        WorkerMount(url=MountURL("/idx/index.txt", indirect=True, secret=SECRET, download_by_initializer=True),
                    env_name="INDEX_URL"),
    ])
    template = {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}
    pod = pod_from_template(IL, template, param)
    spec = pod["spec"]
    env = {e["name"]: e["value"] for e in spec["containers"][0]["env"]}
    assert env["MODEL_URL"] == "/downloads/b/model.pb" and env["OUTPUT_URL"] == "s3://b/out"
    assert env["DATA_URLS"] == "/home/data/data/a.txt;/home/data/data/b.txt" and env["INDEX_URL"] == "/downloads/idx/index.txt"
    assert env["DATA_PATH_PREFIX"] == "/home/data"
    # the not-downloaded s3 mount gives the worker its credentials
    assert (env["S3_ENDPOINT_URL"], env["ACCESS_KEY_ID"], env["SECRET_ACCESS_KEY"]) == ("https://s3.local", "ak", "sk")
    (init,) = spec["initContainers"]
    assert init["args"] == ["s3://b/model.pb", "/downloads/b/", "/home/data/idx/index.txt", "@/downloads/idx/"]
    assert [e["name"] for e in init["env"]] == ["S3_ENDPOINT_URL", "ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "INDIRECT_URL_MARK"]
    assert init["volumeMounts"] == [{"name": "sedna-storage-initializer", "mountPath": "/downloads"},
                                    {"name": "idxz", "mountPath": "/home/data/idx/"}]
    assert [v["name"] for v in spec["volumes"]] == ["sedna-storage-initializer", "dataz", "idxz"]
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": "sedna-storage-initializer", "mountPath": "/downloads", "readOnly": True},
        {"name": "dataz", "mountPath": "/home/data/data/"}, {"name": "dataz", "mountPath": "/home/data/data/"}]
    assert spec["restartPolicy"] == "Never" and pod["metadata"]["generateName"] == "j-train-"


def test_s3_secret_envs_and_merge():
    assert build_s3_secret_envs(SECRET)[0] == {"name": "S3_ENDPOINT_URL", "value": "https://s3.local"}
    http = {**SECRET, "metadata": {"annotations": {"s3-endpoint": "s3.local", "s3-usehttps": "0"}}}
    assert build_s3_secret_envs(http)[0]["value"] == "http://s3.local"
    assert build_s3_secret_envs({"metadata": {}, "data": {}}) == []
    now = [{"name": "A", "value": "1"}]
    assert merge_secret_envs(now, [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]) == [
        {"name": "A", "value": "1"}, {"name": "B", "value": "3"}]
    assert merge_secret_envs(now, [{"name": "A", "value": "2"}], overwrite=True) == [{"name": "A", "value": "2"}]


def test_credential_annotation_is_added_to_a_copy():
    cached = meta.deep_copy(IL)
    before = meta.deep_copy(cached)
    secret_before = meta.deep_copy(SECRET)
    sent = with_credential(cached, SECRET)
    assert json.loads(sent["metadata"]["annotations"]["sedna.io/credential"]) == {
        "s3-endpoint": "s3.local", "ACCESS_KEY_ID": "ak", "SECRET_ACCESS_KEY": "sk"}
    assert sent["metadata"]["annotations"]["sedna.io/credential"].startswith('{"ACCESS_KEY_ID":"ak"')  # Go sorts keys
    assert cached == before and SECRET == secret_before  # Go Sedna writes into the cached object (§10.13)
    assert with_credential(cached, None) == cached


def test_credential_annotation_carries_only_the_keys_the_lc_reads():
    applied = json.dumps({"kind": "Secret", "data": {"ACCESS_KEY_ID": "YWs="}})
    secret = {"metadata": {"name": "s", "annotations": {
        "s3-endpoint": "s3.local", "s3-usehttps": "0", "kubectl.kubernetes.io/last-applied-configuration": applied,
        "team": "vision"}},
        "data": {"ACCESS_KEY_ID": "YWs=", "SECRET_ACCESS_KEY": "c2s=", "ca.crt": "Y2E=", "token": "dG9r"}}
    sent = with_credential({"metadata": {"name": "m", "annotations": {"keep": "me"}}}, secret)
    annotations = sent["metadata"]["annotations"]
    assert annotations["keep"] == "me"
    assert json.loads(annotations["sedna.io/credential"]) == {
        "s3-endpoint": "s3.local", "s3-usehttps": "0", "ACCESS_KEY_ID": "ak", "SECRET_ACCESS_KEY": "sk"}


# -- worker params -------------------------------------------------------------------------------------------------------
def test_inference_worker_with_model_hot_update():
    param = WorkerParam("inference", env={"X": "1"}, host_network=True, dns_policy="ClusterFirstWithHostNet",
                        restart_policy="OnFailure", model_hot_update=ModelHotUpdate(True, 60), annotations={"a": "b"})
    template = {"metadata": {"labels": {"app": "a"}, "annotations": {"t": "1"}, "finalizers": ["f"]},
                "spec": {"containers": [{"name": "c"}, {"name": "d"}]}}
    pod = pod_from_template(IL, template, param)
    assert pod["spec"]["volumes"] == [{"name": "sedna-model-hot-update-volume", "hostPath": {
        "path": "/var/lib/sedna/model-hot-update/default/incrementallearningjob/j/", "type": "DirectoryOrCreate"}}]
    for c in pod["spec"]["containers"]:
        assert c["volumeMounts"] == [{"name": "sedna-model-hot-update-volume", "mountPath": "/model-hot-update"}]
        assert {e["name"]: e["value"] for e in c["env"]} == {"X": "1", "MODEL_HOT_UPDATE": "true",
                                                              "MODEL_POLL_PERIOD_SECONDS": "60",
                                                              "MODEL_HOT_UPDATE_CONFIG": "/model-hot-update/model_config.json"}
    assert pod["spec"]["hostNetwork"] is True and pod["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert pod["spec"]["restartPolicy"] == "OnFailure"
    md = pod["metadata"]
    assert md["labels"]["app"] == "a" and md["labels"]["incrementallearningjob.sedna.io/worker-type"] == "inference"
    assert md["annotations"] == {"t": "1", "a": "b", "sedna.io/model-hot-update-config":
                                 "/var/lib/sedna/model-hot-update/default/incrementallearningjob/j/model_config.json"}
    assert md["finalizers"] == ["f"]
    assert md["ownerReferences"][0]["kind"] == "IncrementalLearningJob" and md["namespace"] == "default"
    train = pod_from_template(IL, template, WorkerParam("train", model_hot_update=ModelHotUpdate(True, 60)))
    assert "volumes" not in train["spec"]  # only inference workers get the hot-update mount


# -- deployments, services, HPAs ----------------------------------------------------------------------------------------------
def test_deployment_from_template():
    param = WorkerParam("Edge", env={"A": "1"}, mounts=[WorkerMount(url=MountURL("/m/x.pb"), env_name="MODEL_URL")])
    d = deployment_from_template(IL, {"replicas": 2, "template": {"metadata": {"labels": {"t": "1"}},
                                                                  "spec": {"containers": [{"name": "c"}]}}}, param)
    assert meta.name(d) == "j-deployment-edge" and d["spec"]["replicas"] == 2
    labels = {**generate_labels(IL, "Edge"), "app.sedna.io": "j-Edge-svc"}
    assert meta.labels(d) == labels and d["spec"]["selector"]["matchLabels"] == labels
    assert d["spec"]["template"]["metadata"]["labels"] == {"t": "1", **labels}
    env = {e["name"]: e["value"] for e in d["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env == {"DATA_PATH_PREFIX": "/home/data", "A": "1", "MODEL_URL": "/home/data/m/x.pb"}
    no_mounts = deployment_from_template(IL, {"template": {"spec": {"containers": [{"name": "c"}]}}}, WorkerParam("Cloud"))
    assert "replicas" not in no_mounts["spec"] and "volumes" not in no_mounts["spec"]["template"]["spec"]


def test_deployment_health():
    def dep(*conds):
        return {"status": {"conditions": [dict(zip(("type", "status", "reason"), c, strict=False)) for c in conds]}}

    assert deployment_failure(dep(("Progressing", "False", "ProgressDeadlineExceeded")))
    assert deployment_failure(dep(("ReplicaFailure", "True", "FailedCreate")))
    assert not deployment_failure(dep(("Progressing", "True", "ReplicaSetUpdated"), ("Available", "False")))
    assert not deployment_available({}) and deployment_available(dep(("Available", "True")))


def test_edge_mesh_service_and_hpa():
    svc = edge_mesh_service(IL, "Aggregation", 7363)
    assert meta.name(svc) == "j-aggregation" and edge_mesh_service_host(IL, "Aggregation") == "j-aggregation.default"
    assert svc["spec"] == {"selector": generate_labels(IL, "Aggregation"),
                           "ports": [{"name": "tcp-0", "protocol": "TCP", "port": 7363, "targetPort": 7363}]}
    assert service_name_error(IL, "Aggregation") == ""
    assert "metadata.name" in service_name_error({**IL, "metadata": {**IL["metadata"], "name": "a" * 60}}, "Aggregation")
    assert "DNS-1035" in service_name_error({**IL, "metadata": {**IL["metadata"], "name": "1abc"}}, "x")
    hpa = new_hpa(IL, "j-deployment-edge", "Edge", {"maxReplicas": 3})
    assert meta.name(hpa) == "hpa-j-deployment-edge" and hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"] == {"maxReplicas": 3, "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                "name": "j-deployment-edge"}}


# -- status helpers and indexes ----------------------------------------------------------------------------------------
def test_convert_map_to_metrics_as_go():
    assert convert_map_to_metrics({"b": "x", "a": 1.0, "c": {"z": 1, "y": [0.5, 2]}}) == [
        {"key": "a", "value": "1"}, {"key": "b", "value": "x"}, {"key": "c", "value": '{"y":[0.5,2],"z":1}'}]
    assert go_json({"k": "<&>"}) == '{"k":"\\u003c\\u0026\\u003e"}'


def test_controller_uid_index_is_registered_once_per_shared_informer():
    factory = SharedInformerFactory(FakeClientset())
    informer = factory.core_v1().pods().informer()
    ensure_index(informer, CONTROLLER_UID_INDEX, controller_uid_index_func)
    ensure_index(informer, CONTROLLER_UID_INDEX, controller_uid_index_func)  # a second controller: no error
    with pytest.raises(ValueError):
        ensure_index(informer, CONTROLLER_UID_INDEX, lambda obj: [])
    pod = {"metadata": {"name": "p", "namespace": "ns", "ownerReferences": [
        {"uid": "u-1", "controller": True}, {"uid": "u-2"}]}}
    informer.get_indexer().add(pod)
    informer.get_indexer().add({"metadata": {"name": "q", "namespace": "ns"}})
    assert [meta.name(p) for p in informer.get_indexer().by_index(CONTROLLER_UID_INDEX, "u-1")] == ["p"]
    assert informer.get_indexer().by_index(CONTROLLER_UID_INDEX, "u-2") == []
