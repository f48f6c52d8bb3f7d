"""The nodes a job names (``globalmanager.runtime.references.named_nodes``): worker templates anywhere in the spec,
the stage annotations and the Dataset's node, each once, with where the job names it."""

from __future__ import annotations

from globalmanager.runtime.references import named_nodes


def _template(node: str) -> dict:
    return {"spec": {"nodeName": node, "containers": []}}


def test_templates_annotations_and_the_dataset_name_nodes_in_order_each_once() -> None:
    job = {
        "metadata": {"name": "j", "annotations": {"sedna.io/Train": "edge-2", "sedna.io/Deploy": "edge-9"}},
        "spec": {
            "trainSpec": {"template": _template("edge-2")},
            "evalSpec": {"template": _template("edge-3")},
            "trainingWorkers": [{"template": _template("edge-4")}, {"template": {"spec": {}}}],
        },
    }
    dataset = {"metadata": {"name": "ds"}, "spec": {"nodeName": "edge-1"}}
    assert named_nodes(job, dataset) == [
        ("edge-2", "spec.trainSpec.template.spec.nodeName"),
        ("edge-3", "spec.evalSpec.template.spec.nodeName"),
        ("edge-4", "spec.trainingWorkers[0].template.spec.nodeName"),
        ("edge-9", "annotation sedna.io/Deploy"),
        ("edge-1", "dataset ds spec.nodeName"),
    ]


def test_a_job_without_nodes_names_none() -> None:
    assert named_nodes({"metadata": {}, "spec": {"template": "not a template"}}) == []
