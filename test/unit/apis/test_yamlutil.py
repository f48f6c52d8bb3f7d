"""Manifests load the way kubectl reads them: no YAML 1.1 base-60 numbers."""

from apis import openapi, yamlutil
from apis.sedna import crds

UPSTREAM_STYLE_TRIGGER = """
apiVersion: sedna.io/v1alpha1
kind: IncrementalLearningJob
metadata: {name: helmet-detection-demo, namespace: default}
spec:
  initialModel: {name: initial-model}
  dataset: {name: incremental-dataset, trainProb: 0.8}
  trainSpec:
    template: {spec: {containers: [{name: train, image: train:v1}]}}
    trigger:
      checkPeriodSeconds: 60
      timer:
        start: 02:00
        end: 20:00
      condition: {operator: ">", threshold: 500, metric: num_of_samples}
  evalSpec:
    template: {spec: {containers: [{name: eval, image: eval:v1}]}}
  deploySpec:
    model: {name: deploy-model}
    trigger:
      condition: {operator: ">", threshold: 0.1, metric: precision_delta}
    hardExampleMining: {name: IBT}
    template: {spec: {containers: [{name: infer, image: infer:v1}]}}
  outputDir: /output
"""


def test_clock_times_stay_strings():
    doc = yamlutil.load("start: 02:00\nend: 20:00\nlong: 1:30:00\n")
    assert doc == {"start": "02:00", "end": "20:00", "long": "1:30:00"}


def test_numbers_and_booleans_still_resolve():
    doc = yamlutil.load("a: 12\nb: -3\nc: 1.5\nd: 0x1f\ne: true\nf: null\n")
    assert doc == {"a": 12, "b": -3, "c": 1.5, "d": 31, "e": True, "f": None}


def test_load_all_drops_empty_documents():
    assert yamlutil.load_all("---\na: 1\n---\n---\nb: 20:30\n") == [{"a": 1}, {"b": "20:30"}]


def test_upstream_sedna_trigger_window_validates():
    job = yamlutil.load(UPSTREAM_STYLE_TRIGGER)
    schema = crds.schema_for("IncrementalLearningJob")
    assert job["spec"]["trainSpec"]["trigger"]["timer"] == {"start": "02:00", "end": "20:00"}
    assert openapi.validate(schema, job) == []
