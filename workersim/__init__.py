"""The worker simulator of the sandbox: plays Sedna's Python SDK inside the worker pods the GM creates.

There are no training images in the sandbox; ``WorkerSimulator`` watches pods and, for every Running pod with a
Sedna worker label (``<kind>.sedna.io/worker-type``), posts to its node's LC what the SDK would (``plays``), writes
the files the worker saves under the node's rootfs, and ends job-like workers' pods through ``pods/status``.
Annotations ``sandbox.sedna.io/worker-*`` steer it (``steering``: the ``ANNOTATION_*`` names). A pod's hostPath
volumes are opened when its worker starts and used through those handles (``mounts``), as a container's mounts;
``sdkmode`` runs Sedna's real SDK in the pods instead of the plays. Opt-in: run
``python -m workersim`` (flags in docs/sandbox.md); without it pods behave as the pod simulator makes them.
Its loggers (``apis.logs.get_logger``) are silent unless the application configures ``logging``.
"""

import logging

from .lcclient import LCClient
from .simulator import JOB_INDEX, WorkerSimulator
from .steering import Steering, parse_steering

__all__ = ["JOB_INDEX", "LCClient", "Steering", "WorkerSimulator", "parse_steering"]

logging.getLogger(__name__).addHandler(logging.NullHandler())
