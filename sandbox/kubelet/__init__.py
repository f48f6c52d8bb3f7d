"""The simulated kubelets' parts, run by ``sandbox.simulator.PodSimulator``: ``nodes`` (node registration, the
Ready condition, addresses), pod ``status`` (the phases and container states a kubelet reports), ``timers`` (when
a pod starts, exits or restarts) and ``pod_events`` (the scheduler's and kubelet's Events about pods). The
annotations that steer a pod are in ``sandbox.steering``."""

from .nodes import KUBELET_VERSION, SimulatedNodes

__all__ = ["KUBELET_VERSION", "SimulatedNodes"]
