"""Typed views of the Sedna kinds and ElasticAIJob: attributes, camelCase emission, exact round trips, bad input."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest

import apis.elasticdl.v1alpha1 as eai
import apis.sedna.v1alpha1 as v1
from apis import openapi, yamlutil
from apis.typed import ApiType, api_field, camel_case, schema_of, spec_of

SAMPLES = Path(__file__).resolve().parents[3] / "charts" / "sedna" / "samples"


def _sample(name: str) -> dict:
    return yamlutil.load((SAMPLES / f"{name}.yaml").read_text())


def test_attribute_access_uses_snake_case():
    job = v1.IncrementalLearningJob.from_dict(_sample("incrementallearningjob"))
    assert job.name == "helmet-detection-incremental" and job.namespace == ""
    assert job.kind == "IncrementalLearningJob" and job.api_version == "sedna.io/v1alpha1"
    trigger = job.spec.train_spec.trigger
    assert isinstance(trigger, v1.Trigger)
    assert (trigger.condition.operator, trigger.condition.threshold, trigger.condition.metric) == (">", 500, "num_of_samples")
    assert trigger.check_period_seconds == 60
    assert (trigger.timer.start, trigger.timer.end) == ("02:00", "06:00")
    assert job.spec.deploy_spec.model.hot_update_enabled is True
    assert job.spec.deploy_spec.hard_example_mining.parameters[0] == v1.ParaSpec(key="threshold_img", value="0.9")
    assert job.spec.dataset.train_prob == 0.8
    assert job.spec.train_spec.template["spec"]["nodeName"] == "edge-node-1"
    assert job.spec.credential_name is None and job.status is None


def test_views_emit_camel_case_and_leave_absent_fields_out():
    job = v1.IncrementalLearningJob(
        api_version="sedna.io/v1alpha1",
        kind="IncrementalLearningJob",
        metadata={"name": "j", "namespace": "ns"},
        spec=v1.ILJobSpec(
            dataset=v1.ILDataset(name="ds", train_prob=0.8),
            initial_model=v1.ModelRef(name="m0"),
            train_spec=v1.TrainSpec(
                template={"spec": {"containers": []}},
                trigger=v1.Trigger(condition=v1.TriggerCondition(operator="ge", threshold=10, metric="num_of_samples")),
            ),
            output_dir="/out",
        ),
    )
    assert job.to_dict() == {
        "apiVersion": "sedna.io/v1alpha1",
        "kind": "IncrementalLearningJob",
        "metadata": {"name": "j", "namespace": "ns"},
        "spec": {
            "dataset": {"name": "ds", "trainProb": 0.8},
            "initialModel": {"name": "m0"},
            "trainSpec": {
                "template": {"spec": {"containers": []}},
                "trigger": {"condition": {"operator": "ge", "threshold": 10, "metric": "num_of_samples"}},
            },
            "outputDir": "/out",
        },
    }
    assert v1.DeployModel(name="m").to_dict() == {"name": "m"}  # the schema default is not filled in by views


def test_status_conditions_and_constants():
    status = {
        "conditions": [
            {"type": "Waiting", "status": "True", "stage": "Train", "lastHeartbeatTime": "2026-01-02T03:04:05Z"},
            {"type": "Ready", "status": "True", "stage": "Train", "data": '{"input": {"models": []}}',
             "lastTransitionTime": "2026-01-02T03:05:00Z", "reason": "TriggerFired", "message": "500 samples"},
        ],
        "startTime": "2026-01-02T03:04:05Z",
    }
    view = v1.ILJobStatus.from_dict(status)
    last = view.conditions[-1]
    assert (last.stage, last.type) == (v1.ILJobStage.TRAIN, v1.ILJobStageConditionType.READY)
    assert last.last_transition_time == "2026-01-02T03:05:00Z" and last.data.startswith("{")
    view.conditions.append(v1.ILJobCondition(type=v1.StageConditionType.STARTING, status="True", stage=v1.Stage.TRAIN))
    assert view.to_dict()["conditions"][-1] == {"type": "Starting", "status": "True", "stage": "Train"}
    assert view.to_dict()["conditions"][:2] == status["conditions"]
    assert v1.StageConditionType.ALL == ("Waiting", "Ready", "Starting", "Running", "Completed", "Failed")
    assert v1.Stage.ALL == ("Train", "Eval", "Deploy")
    assert v1.ServiceConditionType.ALL == ("Pending", "Failed", "Running")
    assert v1.FLJobConditionType.ALL == ("Complete", "Failed", "Training")
    assert v1.FLJobPhase.ALL == ("Pending", "Running", "Succeeded", "Failed")
    assert v1.TRIGGER_OPERATORS == (">=", ">", "=", "==", "<=", "<", "!=", "ge", "gt", "eq", "le", "lt", "ne")
    assert eai.ElasticAIJobPhase.ALL == ("Pending", "Running", "Succeeded", "Failed")
    assert eai.ElasticAIJobConditionType.ALL == ("Created", "Running", "Succeeded", "Failed")


def test_exact_json_names_that_are_not_camel_case():
    model = v1.Model.from_dict(_sample("model"))
    assert model.spec.device_soc_versions == ["Ascend310"]
    kb = {
        "AIModels": {"numberOfAIModels": 1, "listOfAIModels": [{"modelID": "m1", "averagePrecision": 0.9, "numberOfTrainSamples": 10}]},
        "AIClasses": {"numberOfAIClasses": 2, "listOfAIClasses": ["a", "b"]},
        "samples": {"numberOfLabeledUnseenSample": 3, "numberOfUnseenSample": 4},
    }
    view = v1.KnowledgeBase.from_dict(kb)
    assert view.ai_models.list_of_ai_models[0].model_id == "m1"
    assert view.ai_classes.number_of_ai_classes == 2 and view.samples.number_of_unseen_sample == 4
    assert view.to_dict() == kb
    assert view.ai_models._extra == {}  # every name was recognised
    job = eai.ElasticAIJob.from_dict(_sample("elasticaijob"))
    assert job.spec.worker.resource_request == "cpu=2,memory=2048Mi" and job.spec.worker.count == 4
    assert job.spec.job_args[0] == "--model_zoo /model_zoo"
    status = {"phase": "Running", "startTime": "2026-01-02T03:04:05Z",
              "conditions": [{"type": "Created", "status": "True", "reason": "JobCreated", "message": "m",
                              "lastTransitionTime": "2026-01-02T03:04:05Z"}],
              "replicaStatuses": {"master": {"active": 1}, "worker": {"active": 3, "failed": 1}, "ps": {"succeeded": 0}}}
    sview = eai.ElasticAIJobStatus.from_dict(status)
    assert sview.replica_statuses.worker.failed == 1 and sview.conditions[0].last_transition_time.endswith("Z")
    assert sview.to_dict() == status
    assert openapi.validate(schema_of(eai.ElasticAIJobStatus), status) == []


def test_unknown_fields_and_explicit_nulls_survive_at_every_level():
    sample = _sample("federatedlearningjob")
    sample["spec"]["trainingWorkers"][1]["dataset"]["version"] = "v2"
    sample["spec"]["transmitter"]["ws"]["compression"] = "gzip"
    sample["spec"]["pretrainedModel"] = None
    sample["status"] = {"phase": "Running", "active": 3, "conditions": [{"type": "Training", "status": "True",
                                                                         "lastProbeTime": None, "round": 4}]}
    view = v1.FederatedLearningJob.from_dict(sample)
    assert view.spec.pretrained_model is None
    assert view.spec.training_workers[1].dataset._extra == {"version": "v2"}
    assert view.to_dict() == sample


def test_changes_to_a_view_show_in_to_dict():
    view = v1.Dataset.from_dict(_sample("dataset"))
    view.status = v1.DatasetStatus(number_of_samples=42, update_time="2026-01-02T03:04:05Z")
    view.spec.node_name = "edge-node-9"
    out = view.to_dict()
    assert out["status"] == {"updateTime": "2026-01-02T03:04:05Z", "numberOfSamples": 42}
    assert out["spec"]["nodeName"] == "edge-node-9"


@pytest.mark.parametrize(
    "kind, mutate, field",
    [
        (v1.IncrementalLearningJob, lambda d: d["spec"]["trainSpec"]["trigger"]["condition"].update(threshold="x"),
         "spec.trainSpec.trigger.condition.threshold"),
        (v1.IncrementalLearningJob, lambda d: d["spec"]["deploySpec"]["model"].update(hotUpdateEnabled="yes"),
         "spec.deploySpec.model.hotUpdateEnabled"),
        (v1.IncrementalLearningJob, lambda d: d["spec"].update(trainSpec=[]), "spec.trainSpec"),
        (v1.IncrementalLearningJob, lambda d: d["spec"]["trainSpec"].update(template="pod"), "spec.trainSpec.template"),
        (v1.FederatedLearningJob, lambda d: d["spec"]["trainingWorkers"][1]["dataset"].update(name=7),
         "spec.trainingWorkers[1].dataset.name"),
        (v1.FederatedLearningJob, lambda d: d["spec"].update(trainingWorkers={"a": 1}), "spec.trainingWorkers"),
        (v1.Dataset, lambda d: d.update(status={"numberOfSamples": True}), "status.numberOfSamples"),
        (v1.Model, lambda d: d["spec"].update(device_soc_versions=["a", 3]), "spec.device_soc_versions[1]"),
        (v1.JointInferenceService, lambda d: d["spec"]["edgeWorker"]["hpa"].update(maxReplicas="2"),
         "spec.edgeWorker.hpa.maxReplicas"),
        (v1.Dataset, lambda d: d.update(metadata=["x"]), "metadata"),
        (eai.ElasticAIJob, lambda d: d["spec"]["ps"].update(count=1.5), "spec.ps.count"),
    ],
)
def test_wrong_types_raise_value_error_naming_the_field(kind, mutate, field):
    sample_name = {"ElasticAIJob": "elasticaijob"}.get(kind.__name__, kind.__name__.lower())
    data = _sample(sample_name)
    mutate(data)
    with pytest.raises(ValueError, match=r"^" + field.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.") + ":"):
        kind.from_dict(data)


def test_not_an_object_at_the_root():
    with pytest.raises(ValueError, match="Dataset: expected an object, got array"):
        v1.Dataset.from_dict([])  # type: ignore[arg-type]


def test_numbers_follow_json_rules():
    cond = v1.TriggerCondition.from_dict({"operator": ">", "threshold": 5, "metric": "m"})
    assert cond.threshold == 5 and isinstance(cond.threshold, int)  # kept as given, so round trips are exact
    assert v1.Trigger.from_dict({"checkPeriodSeconds": 30.0}).check_period_seconds == 30.0
    with pytest.raises(ValueError, match="checkPeriodSeconds: expected integer, got number 2.5"):
        v1.Trigger.from_dict({"checkPeriodSeconds": 2.5})
    with pytest.raises(ValueError, match="expected integer, got boolean"):
        v1.Trigger.from_dict({"checkPeriodSeconds": True})


def test_every_kind_is_exported_with_its_registered_resource():
    assert len(v1.KINDS) == 11
    for kind, cls in v1.KINDS.items():
        assert cls.__name__ == kind and cls.info().kind == kind
        assert cls.info().gvr.group == "sedna.io" and cls.info().has_status
    assert eai.ElasticAIJob.info().short_names == ("eaijob",)
    for module in (v1, eai):
        for name in module.__all__:
            assert getattr(module, name) is not None, name


# --------------------------------------------------------------------------------- the mechanism itself


@dataclass(kw_only=True)
class _Inner(ApiType):
    level: int | None = api_field(required=True, minimum=0, default=1)


@dataclass(kw_only=True)
class _Outer(ApiType):
    SCHEMA_DESCRIPTION = "An outer thing."
    the_name: str | None = api_field(required=True, enum=["a", "b"], doc="Which  one.")
    odd_name: str | None = api_field("odd-name")
    inners: list[_Inner] | None = api_field()
    by_key: dict[str, _Inner] | None = api_field()
    free: dict[str, object] | None = None  # not an api_field: ignored by views and schemas


def test_schema_of_a_view_type_follows_its_declarations():
    assert camel_case("pod_failure_policy") == "podFailurePolicy"
    inner = {"type": "object", "properties": {"level": {"type": "integer", "minimum": 0, "default": 1}}, "required": ["level"]}
    assert schema_of(_Outer) == {
        "type": "object",
        "description": "An outer thing.",
        "properties": {
            "theName": {"type": "string", "description": "Which one.", "enum": ["a", "b"]},
            "odd-name": {"type": "string"},
            "inners": {"type": "array", "items": inner},
            "byKey": {"type": "object", "additionalProperties": inner},
        },
        "required": ["theName"],
    }


def test_map_of_views_round_trips_and_reports_key_paths():
    data = {"theName": "a", "odd-name": "x", "byKey": {"k": {"level": 2}}, "inners": [{"level": 0, "extra": 1}]}
    view = _Outer.from_dict(copy.deepcopy(data))
    assert view.by_key["k"].level == 2 and view.odd_name == "x" and view.inners[0]._extra == {"extra": 1}
    assert view.to_dict() == data
    with pytest.raises(ValueError, match=r"^byKey\[k\]\.level: expected integer"):
        _Outer.from_dict({"byKey": {"k": {"level": "two"}}})


def test_view_of_parses_an_object_once_while_its_dicts_are_the_same():
    job = {"apiVersion": "sedna.io/v1alpha1", "kind": "FederatedLearningJob",
           "metadata": {"name": "fl", "namespace": "default", "uid": "u-1"},
           "spec": {"aggregationWorker": {"model": {"name": "m"}}}}
    first = v1.FederatedLearningJob.view_of(job)
    assert v1.FederatedLearningJob.view_of(dict(job)) is first  # a shallow copy (what a lister hands out) hits
    updated = {**job, "spec": {"aggregationWorker": {"model": {"name": "m2"}}}}  # an update brings new dicts
    second = v1.FederatedLearningJob.view_of(updated)
    assert second is not first and second.spec is not None and second.spec.aggregation_worker is not None
    assert second.spec.aggregation_worker.model is not None and second.spec.aggregation_worker.model.name == "m2"
    assert v1.FederatedLearningJob.view_of({**job, "metadata": {"name": "fl"}}) is not first  # no UID: parsed


def test_spec_of_parses_the_spec_alone_once_while_it_is_unchanged():
    spec = {"aggregationWorker": {"model": {"name": "m"}}}
    job = {"metadata": {"name": "fl", "namespace": "default", "uid": "u-spec"}, "spec": spec,
           "status": {"conditions": "not a list"}}  # a status the full view rejects: never parsed here
    with pytest.raises(ValueError, match=r"^status\.conditions: expected an array"):
        v1.FederatedLearningJob.view_of(job)
    first = spec_of(v1.FLJobSpec, job)
    assert first is not None and first.aggregation_worker is not None and first.aggregation_worker.model is not None
    assert first.aggregation_worker.model.name == "m"
    assert spec_of(v1.FLJobSpec, {**job, "status": {"phase": "Running"}}) is first  # a status update: no parse
    redecoded = copy.deepcopy(spec)  # what the next watch event brings for a spec it left alone: equal, new dicts
    assert spec_of(v1.FLJobSpec, {**job, "spec": redecoded}) is first
    changed = spec_of(v1.FLJobSpec, {**job, "spec": {"aggregationWorker": {"model": {"name": "m2"}}}})
    assert changed is not first and changed is not None and changed.aggregation_worker is not None
    assert changed.aggregation_worker.model is not None and changed.aggregation_worker.model.name == "m2"
    assert spec_of(v1.FLJobSpec, {"metadata": {"uid": "u-none"}}) is None
    with pytest.raises(ValueError, match=r"^spec\.aggregationWorker: expected an object, got string"):
        spec_of(v1.FLJobSpec, {**job, "spec": {"aggregationWorker": "x"}})
