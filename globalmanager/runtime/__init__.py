"""Shared controller runtime: ``Kind`` (a kind's declaration: what it watches and its rules), ``KindContext`` (all a
kind's rules get: jobs, owned objects with self-healing and per-job state, references, the edge), ``JobController``
(runs a ``Kind``: informers, handlers, queue, workers), Sedna's worker contract (pods, Deployments, edge-mesh
Services, HPAs, labels, env, storage, S3 secrets, model hot update), status/condition helpers and the EventRecorder."""

from apis.record import NORMAL, WARNING, EventRecorder

from .autoscaling import ensure_hpa, hpa_name, new_hpa
from .context import KindContext, WorkerCreation
from .credential import edge_copy, with_credential
from .deployments import (
    APP_LABEL,
    deployment_available,
    deployment_failure,
    deployment_from_template,
    deployment_name,
    ensure_deployment,
    inject_deployment_param,
)
from .edge import DELETE, INSERT, STATUS, UPDATE, EdgeLink, RecordingEdgeLink, UpstreamMessage
from .jobcontroller import JobController
from .jobstate import JobState, JobStates
from .kind import Kind
from .labels import generate_labels, generate_selector, generate_worker_selector
from .names import convert_k8s_valid_name, label_value, rand_string
from .owned_errors import NotOwnedError
from .pods import (
    count_pods,
    create_pod_with_template,
    filter_active_pods,
    get_pod_from_template,
    is_pod_active,
    pod_from_template,
)
from .revisions import is_current_generation, spec_hash_matches, stamp_generation, stamp_spec_hash
from .secrets import build_s3_secret_envs, get_secret, merge_secret_envs
from .selfheal import RecreatedPods
from .services import edge_mesh_service, edge_mesh_service_host, ensure_service, service_name_error
from .status import (
    append_condition,
    condition_is_true,
    convert_map_to_metrics,
    get_condition,
    last_condition,
    set_condition,
    update_status,
)
from .storage import MountURL, WorkerMount, inject_env
from .worker import ModelHotUpdate, WorkerParam, inject_worker_param, model_hot_update_config_file

__all__ = [
    "APP_LABEL",
    "DELETE",
    "EdgeLink",
    "EventRecorder",
    "INSERT",
    "JobState",
    "JobStates",
    "JobController",
    "Kind",
    "KindContext",
    "ModelHotUpdate",
    "MountURL",
    "NORMAL",
    "NotOwnedError",
    "RecordingEdgeLink",
    "RecreatedPods",
    "WorkerCreation",
    "STATUS",
    "UPDATE",
    "UpstreamMessage",
    "WARNING",
    "WorkerMount",
    "WorkerParam",
    "append_condition",
    "build_s3_secret_envs",
    "condition_is_true",
    "convert_k8s_valid_name",
    "convert_map_to_metrics",
    "count_pods",
    "create_pod_with_template",
    "deployment_available",
    "deployment_failure",
    "deployment_from_template",
    "deployment_name",
    "edge_copy",
    "edge_mesh_service",
    "edge_mesh_service_host",
    "ensure_deployment",
    "ensure_hpa",
    "ensure_service",
    "filter_active_pods",
    "generate_labels",
    "generate_selector",
    "generate_worker_selector",
    "get_condition",
    "get_pod_from_template",
    "get_secret",
    "hpa_name",
    "inject_deployment_param",
    "inject_env",
    "inject_worker_param",
    "is_current_generation",
    "is_pod_active",
    "label_value",
    "last_condition",
    "merge_secret_envs",
    "model_hot_update_config_file",
    "new_hpa",
    "pod_from_template",
    "rand_string",
    "service_name_error",
    "set_condition",
    "spec_hash_matches",
    "stamp_generation",
    "stamp_spec_hash",
    "update_status",
    "with_credential",
]

