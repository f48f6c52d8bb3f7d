"""Descriptions of the CRD fields (what ``kubectl explain`` prints), for every field a view type does not document
itself with ``api_field(doc=...)``. Written from Sedna's API documentation (proposals and ``*_types.go`` comments) in
our own words.

A field's description is looked up by the end of its path (``spec.trainSpec.trigger.condition.operator``; list items
are ``[]``): first ``"<Kind>:<suffix>"``, then ``"<suffix>"``, the longest matching suffix winning, so that shared
types (triggers, conditions, Deployment and Job fields) are described once. ``describe`` fills them into a schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DESCRIPTIONS", "describe", "description_for"]

_KUBE_TIME = "An RFC 3339 timestamp."

DESCRIPTIONS: dict[str, str] = {
    # -- every kind's root fields
    "apiVersion": "The versioned schema of this object: sedna.io/v1alpha1 (elasticdl.org/v1alpha1 for ElasticAIJob).",
    "kind": "The REST resource this object represents, in CamelCase.",
    "metadata": "Standard object metadata: name, namespace, labels, annotations.",
    "Dataset:spec": "Where the dataset lives: its index file's URL, its format and the edge node that holds it.",
    "Dataset:status": "What the LocalController of the dataset's node last reported about it.",
    "Model:spec": "Where the model lives (URL) and its format.",
    "Model:status": "What the workers last reported about the model.",
    "JointInferenceService:spec": "The edge worker (small model, hard example mining) and the cloud worker (big "
                                  "model) that serve inference together.",
    "JointInferenceService:status": "Conditions of the service and its worker counts, maintained by the "
                                    "GlobalManager.",
    "FederatedLearningJob:spec": "The aggregation worker, the training workers (one per edge dataset) and how they "
                                 "exchange model updates.",
    "FederatedLearningJob:status": "Phase, conditions and worker counts of the job, maintained by the GlobalManager.",
    "IncrementalLearningJob:spec": "The dataset, the initial model and the train, eval and deploy stages with their "
                                   "triggers.",
    "IncrementalLearningJob:status": "The stage conditions of the job, one appended per state change; the last one "
                                     "is the current stage and its state.",
    "LifelongLearningJob:spec": "The dataset and the train, eval and deploy stages with the train trigger.",
    "LifelongLearningJob:status": "The stage conditions of the job (the last one is the current stage) and its "
                                  "knowledge base.",
    "FeatureExtractionService:spec": "The feature extraction workers, as a Deployment spec, and the model they use.",
    "FeatureExtractionService:status": "Conditions of the service and its worker counts.",
    "ObjectSearchService:spec": "The user worker, the tracking workers and the ReID workers of the search.",
    "ObjectSearchService:status": "Conditions of the service and its worker counts.",
    "ObjectTrackingService:spec": "The tracking workers and the ReID workers of the service.",
    "ObjectTrackingService:status": "Conditions of the service and its worker counts.",
    "ReidJob:spec": "The ReID workers, as a batch Job spec.",
    "ReidJob:status": "Phase, conditions and worker counts of the job.",
    "VideoAnalyticsJob:spec": "The video analytics workers, as a batch Job spec, and the model they use.",
    "VideoAnalyticsJob:status": "Phase, conditions and worker counts of the job.",
    "ElasticAIJob:spec": "The ElasticDL master's arguments and the worker and parameter server resources.",
    "ElasticAIJob:status": "Phase, conditions, times and per-role pod counts of the job.",
    # -- references and shared pieces
    "model": "The Model this worker serves or trains, by name.",
    "model.name": "Name of a Model in the job's namespace.",
    "pretrainedModel": "The Model the training workers start from, by name.",
    "pretrainedModel.name": "Name of a Model in the job's namespace.",
    "initialModel": "The Model the first round starts from and evaluates against, by name.",
    "initialModel.name": "Name of a Model in the job's namespace.",
    "initialEvalModel": "A Model evaluated besides the trained one in the first round, by name.",
    "initialEvalModel.name": "Name of a Model in the job's namespace.",
    "dataset": "The Dataset the job learns from, by name.",
    "dataset.name": "Name of a Dataset in the job's namespace.",
    "trainingWorkers[].dataset": "The Dataset this training worker learns from (the worker runs on its node).",
    "template": "The pod template of the worker (a v1 PodTemplateSpec); pin it to a node with spec.nodeName.",
    "hardExampleMining": "The hard example mining algorithm the edge worker runs on its inference results.",
    "hardExampleMining.name": "Name of the algorithm, e.g. IBT (image-box-threshold) or CrossEntropy.",
    "hardExampleMining.parameters": "Parameters of the algorithm, as key-value pairs.",
    "parameters[].key": "Parameter name.",
    "parameters[].value": "Parameter value, as a string.",
    "metrics": "Metrics reported by the workers, as key-value pairs.",
    "metrics[].key": "Metric name.",
    "metrics[].value": "Metric value, as a string.",
    "hpa": "Autoscaling of the worker's Deployment: a HorizontalPodAutoscaler the GlobalManager creates.",
    "hpa.minReplicas": "The fewest replicas the autoscaler keeps.",
    "hpa.maxReplicas": "The most replicas the autoscaler may create.",
    "hpa.metrics": "The autoscaling/v2 metrics the autoscaler scales on.",
    "hpa.behavior": "The autoscaling/v2 scale-up and scale-down behavior.",
    "edgeWorker": "The worker on the edge node: the small model, with hard example mining.",
    "cloudWorker": "The worker in the cloud: the big model that answers the hard examples.",
    "aggregationWorker": "The worker that aggregates the training workers' model updates.",
    "trainingWorkers": "The training workers, one per dataset; each runs on its dataset's node.",
    "trainingWorkers[].template": "The training worker's pod template (a v1 PodTemplateSpec).",
    "transmitter": "How the workers exchange model updates: through S3 or through the aggregation worker's "
                   "websocket (the default).",
    "transmitter.s3": "Exchange model updates through S3.",
    "transmitter.s3.credentialName": "Name of the Secret holding the S3 credentials.",
    "transmitter.ws": "Exchange model updates through the aggregation worker's websocket.",
    "outputDir": "Where the job writes its trained models (a host path on the nodes, or an s3:// URL).",
    "trainSpec": "The train stage: its worker and the trigger that starts it.",
    "evalSpec": "The eval stage: its worker, which evaluates the trained model.",
    "deploySpec": "The deploy stage: the model to replace, the trigger that decides it and the inference worker.",
    "deploySpec.model": "The Model the deploy stage replaces with the newly trained one, by name.",
    "deploySpec.model.name": "Name of a Model in the job's namespace.",
    "trigger": "When the stage starts: a condition on a metric, checked periodically within an optional daily "
               "window.",
    "trigger.checkPeriodSeconds": "How often the trigger condition is checked, in seconds.",
    "trigger.timer": "A daily time window outside which the trigger does not fire.",
    "timer.start": "Start of the window, HH:MM.",
    "timer.end": "End of the window, HH:MM (may be earlier than start: the window spans midnight).",
    "trigger.condition": "The condition that fires the trigger: metric operator threshold.",
    "condition.operator": "Comparison of the metric with the threshold: >, >=, =, ==, <, <=, != or gt, ge, eq, lt, "
                          "le, ne.",
    "condition.threshold": "The value the metric is compared with.",
    "userWorker": "The worker that receives the user's search request.",
    "userWorker.template": "The user worker's pod template (a v1 PodTemplateSpec).",
    "trackingWorkers": "The object tracking workers, one per video source.",
    "trackingWorkers[].template": "A tracking worker's pod template (a v1 PodTemplateSpec).",
    "reidWorkers": "The ReID workers, as a Deployment spec.",
    "kafkaSupport": "Whether the workers exchange data through Kafka.",
    "ps": "The parameter server pods' resources.",
    "worker": "The worker pods' resources.",
    # -- Deployment spec fields (FeatureExtractionService, reidWorkers)
    "replicas": "Number of worker pods.",
    "strategy": "How old worker pods are replaced by new ones (an apps/v1 DeploymentStrategy).",
    "minReadySeconds": "Seconds a new pod must be ready before it counts as available.",
    "revisionHistoryLimit": "How many old ReplicaSets are kept for rollback.",
    "paused": "Whether the rollout of the workers is paused.",
    "progressDeadlineSeconds": "Seconds a rollout may take before it is reported as failed.",
    # -- batch Job spec fields (ReidJob, VideoAnalyticsJob)
    "parallelism": "The most worker pods running at once.",
    "completions": "How many worker pods must succeed.",
    "activeDeadlineSeconds": "Seconds the job may run before it is stopped.",
    "podFailurePolicy": "How pod failures count towards the job's failure (a batch/v1 PodFailurePolicy).",
    "successPolicy": "When the job counts as succeeded before all pods did (a batch/v1 SuccessPolicy).",
    "backoffLimit": "Retries before the job is marked failed.",
    "backoffLimitPerIndex": "Retries per index of an Indexed job.",
    "maxFailedIndexes": "Failed indexes tolerated before an Indexed job fails.",
    "selector": "A label query over the pods of the job.",
    "manualSelector": "Whether the selector is set by the user rather than generated.",
    "ttlSecondsAfterFinished": "Seconds after the job finished until it is deleted.",
    "completionMode": "NonIndexed or Indexed.",
    "suspend": "Whether the job's pods are stopped.",
    "podReplacementPolicy": "When a replacement pod is created for a failed one.",
    "managedBy": "The controller that manages the job.",
    # -- status
    "status.updateTime": "When the status was last updated. " + _KUBE_TIME,
    "Dataset:status.numberOfSamples": "Number of samples in the dataset's index file, as its node counted them.",
    "Model:status.metrics": "The model's metrics, as the last worker that evaluated it reported them.",
    "conditions": "The latest observations of the object's state, oldest first.",
    "conditions[].type": "Type of the condition (its state).",
    "conditions[].status": "Whether the condition holds: True, False or Unknown.",
    "conditions[].lastHeartbeatTime": "When the condition was last probed. " + _KUBE_TIME,
    "conditions[].lastProbeTime": "When the condition was last probed. " + _KUBE_TIME,
    "conditions[].lastTransitionTime": "When the condition last changed. " + _KUBE_TIME,
    "conditions[].reason": "A machine-readable reason for the condition's last transition.",
    "conditions[].message": "A human-readable message with details of the last transition.",
    "conditions[].stage": "The stage the condition is about: Train, Eval or Deploy.",
    "IncrementalLearningJob:conditions[].type": "The stage's state: Waiting, Ready, Starting, Running, Completed or "
                                                "Failed.",
    "LifelongLearningJob:conditions[].type": "The stage's state: Waiting, Ready, Starting, Running, Completed or "
                                             "Failed.",
    "startTime": "When the GlobalManager started the job. " + _KUBE_TIME,
    "completionTime": "When the job completed. " + _KUBE_TIME,
    "active": "Number of worker pods running.",
    "succeeded": "Number of worker pods that succeeded.",
    "failed": "Number of worker pods that failed.",
    "phase": "The job's phase: Pending, Running, Succeeded or Failed.",
    "knowledgeBase": "What the lifelong learning knowledge base holds: its models, classes and samples.",
    "knowledgeBase.AIModels": "The models of the knowledge base.",
    "AIModels.numberOfAIModels": "Number of models.",
    "AIModels.listOfAIModels": "The models.",
    "listOfAIModels[].modelID": "Identifier of the model in the knowledge base.",
    "listOfAIModels[].averagePrecision": "The model's average precision.",
    "listOfAIModels[].numberOfTrainSamples": "Number of samples the model was trained on.",
    "knowledgeBase.AIClasses": "The classes the knowledge base's models know.",
    "AIClasses.numberOfAIClasses": "Number of classes.",
    "AIClasses.listOfAIClasses": "The class names.",
    "knowledgeBase.samples": "The samples the knowledge base has seen.",
    "samples.numberOfLabeledUnseenSample": "Number of unseen samples that were labeled.",
    "samples.numberOfUnseenSample": "Number of samples no model of the knowledge base fits.",
    "replicaStatuses": "Pod counts per role: master, worker, ps.",
    "replicaStatuses.master": "Pod counts of the master.",
    "replicaStatuses.worker": "Pod counts of the workers.",
    "replicaStatuses.ps": "Pod counts of the parameter servers.",
    "ElasticAIJob:conditions[].type": "Created, Running, Succeeded or Failed.",
}


def description_for(kind: str, path: str) -> str | None:
    """The description of the field at ``path`` (dotted, list items as ``[]``) of ``kind``'s schema."""
    parts = path.split(".")
    for start in range(len(parts)):
        suffix = ".".join(parts[start:])
        for key in (f"{kind}:{suffix}", suffix):
            if key in DESCRIPTIONS:
                return DESCRIPTIONS[key]
    return None


def describe(schema: dict[str, Any], kind: str, path: str = "") -> dict[str, Any]:
    """Give every property of ``schema`` without a description the one ``description_for`` finds (in place);
    returns ``schema``."""
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name, prop in properties.items():
            sub = f"{path}.{name}" if path else name
            if "description" not in prop:
                text = description_for(kind, sub)
                if text:
                    prop["description"] = text
            describe(prop, kind, sub)
    items = schema.get("items")
    if isinstance(items, dict):
        describe(items, kind, f"{path}[]")
    return schema
