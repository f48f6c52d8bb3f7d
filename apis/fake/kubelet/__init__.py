"""The pod-lifecycle simulator of the sandbox: plays the scheduler, the kubelets (``nodes``, pod ``status``) and
the deployment controller (``deployments``) on a tracker; ``PodSimulator`` runs them."""

from .deployments import POD_TEMPLATE_HASH_LABEL, DeploymentSimulator, template_hash
from .nodes import KUBELET_VERSION, SimulatedNodes
from .simulator import (
    ANNOTATION_EXIT_CODE,
    ANNOTATION_RUN_SECONDS,
    ANNOTATION_START_DELAY,
    DEFAULT_NODE,
    PodSimulator,
)

__all__ = [
    "ANNOTATION_EXIT_CODE",
    "ANNOTATION_RUN_SECONDS",
    "ANNOTATION_START_DELAY",
    "DEFAULT_NODE",
    "KUBELET_VERSION",
    "POD_TEMPLATE_HASH_LABEL",
    "DeploymentSimulator",
    "PodSimulator",
    "SimulatedNodes",
    "template_hash",
]
