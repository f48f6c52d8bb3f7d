"""The pod-lifecycle simulator of the sandbox: plays the scheduler, the kubelets (``nodes``, pod ``status``,
``steering`` annotations, ``timers``) and the Deployment and ReplicaSet controllers (``deployments``,
``replicasets``; ``rollout``, ``deployment_status``, ``claim``, ``events``; ``pod_events``: the scheduler's and
kubelet's Events about pods) on a tracker (``tracker_api``: the part
of it they use); ``PodSimulator`` runs them."""

from .deployments import POD_TEMPLATE_HASH_LABEL, DeploymentSimulator, template_hash
from .nodes import KUBELET_VERSION, SimulatedNodes
from .replicasets import ANNOTATION_FAIL_POD_CREATION, ReplicaSetSimulator
from .simulator import (
    ANNOTATION_CRASH_LOOP,
    ANNOTATION_EXIT_CODE,
    ANNOTATION_RUN_SECONDS,
    ANNOTATION_START_DELAY,
    DEFAULT_NODE,
    PodSimulator,
)

__all__ = [
    "ANNOTATION_CRASH_LOOP",
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_FAIL_POD_CREATION",
    "ANNOTATION_RUN_SECONDS",
    "ANNOTATION_START_DELAY",
    "DEFAULT_NODE",
    "KUBELET_VERSION",
    "POD_TEMPLATE_HASH_LABEL",
    "DeploymentSimulator",
    "PodSimulator",
    "ReplicaSetSimulator",
    "SimulatedNodes",
    "template_hash",
]
