"""The built-in controllers of the sandbox, ported from kube-controller-manager and run by
``sandbox.simulator.PodSimulator``: the Deployment controller (``deployments``, ``rollout``,
``deployment_status``) and the ReplicaSet controller (``replicasets``); ``claim`` is their ControllerRefManager
(adoption and release of owned objects)."""

from .deployments import POD_TEMPLATE_HASH_LABEL, DeploymentSimulator, template_hash
from .replicasets import ReplicaSetSimulator

__all__ = ["POD_TEMPLATE_HASH_LABEL", "DeploymentSimulator", "ReplicaSetSimulator", "template_hash"]
