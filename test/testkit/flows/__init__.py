"""Each registered sedna-gm controller driven through its flow by its sample from ``charts/sedna/samples/``.

``FLOWS`` maps a controller's registry name to its ``Flow``: the sample to apply (``adjust``-ed to run in the
sandbox), what shows that the controller did its work, and the ``Step``s that follow — a worker deleted from under
it, a spec change, new samples — each with what shows it was carried out; the test then deletes the object. Every
flow makes its controller do, at least once, every kind of API call it makes (create, update, patch and delete of
its workers, status writes and the re-read after a conflict, Events). A controller added to the registry without an
entry here fails ``test/e2e/test_chart_rbac_e2e.py`` with a message naming this package: add its sample and a
``Flow`` (``jobs.py``, ``services.py``, ``learning.py``).
"""

from __future__ import annotations

from .base import SAMPLES_DIR, Flow, FlowRun, Step, load_sample, prepare
from .jobs import JOB_FLOWS
from .learning import LEARNING_FLOWS
from .services import SERVICE_FLOWS

__all__ = ["FLOWS", "SAMPLES_DIR", "Flow", "FlowRun", "Step", "load_sample", "prepare"]

FLOWS: dict[str, Flow] = {**JOB_FLOWS, **SERVICE_FLOWS, **LEARNING_FLOWS}
