"""Issue 11 item 9: names derived from an ElasticAIJob's name must be valid, or the job says why (InvalidSpec) instead
of failing every sync on the API server's 422 with no status, condition or Event."""

from __future__ import annotations

from elasticdl_test_helpers import conditions

from apis import meta


def test_a_64_character_name_is_an_invalid_spec_with_the_reason(make_harness, new_job):
    name = "m" * 64
    h = make_harness(new_job(name=name))
    h.refresh()
    assert h.controller.sync(f"default/{name}") is None  # no exception: no hot retry
    job = h.job(name)
    failed = conditions(job)["Failed"]
    assert job["status"]["phase"] == "Failed" and failed["reason"] == "InvalidSpec"
    assert failed["message"].startswith("metadata.name: ") and "63" in failed["message"]
    assert [(e["type"], e["reason"]) for e in h.events()] == [("Warning", "InvalidSpec")]
    assert h.pod_names() == []


def test_the_longest_names_that_work_make_valid_pods(make_harness, new_job):
    name = "m" * 46  # elasticdl-<name>-master: the container name, a DNS-1123 label, is 63 characters
    h = make_harness(new_job(name=name))
    h.refresh()
    h.controller.sync(f"default/{name}")
    (pod,) = h.pods.list()["items"]
    assert len(pod["spec"]["containers"][0]["name"]) == 63
    assert all(len(v) <= 63 for v in meta.labels(pod).values())
    longer = "m" * 47
    h2 = make_harness(new_job(name=longer))
    h2.refresh()
    h2.controller.sync(f"default/{longer}")
    assert conditions(h2.job(longer))["Failed"]["reason"] == "InvalidSpec"


def test_volume_names_count_too(make_harness, new_job):
    name = "v" * 40  # elasticdl-<name>-master-volume-0 has 66 characters
    h = make_harness(new_job(name=name, master={"image": "i", "volume": "host_path=/d,mount_path=/d"}))
    h.refresh()
    h.controller.sync(f"default/{name}")
    failed = conditions(h.job(name))["Failed"]
    assert failed["reason"] == "InvalidSpec" and "volume" in failed["message"]
    assert h.pod_names() == []
