"""The control plane of an ElasticDL master (seed 003), written as the worked example of the library: it imports
``apis``, ``informers``, ``workqueue`` and ``reconcile`` only.

* ``tasks.TaskDispatcher`` — the work queue manager: units of work ``(file, start, end)`` × epochs, handed to the
  workers that ask, taken back from workers that die; every unit of every epoch done exactly once.
* ``state.WorkerTable`` and ``listener.EventListener`` — the event listener: a pod informer filtered to the job's
  workers turns pod events into a global view of worker states.
* ``workers.WorkerManager`` — the worker manager: keeps the number of workers at the threshold on a
  reconcile runner (``reconcile.Controller`` keyed by slot; exponential backoff on relaunches), removes extra and stuck workers.
* ``api.WorkerAPI`` — the HTTP API for workers; ``client.MasterClient`` talks to it.
* ``master.Master`` wires them; ``python -m examples.elasticdl_master`` runs it with ElasticDL's flags.

Importing the package configures nothing and logs nothing.
"""

from .api import WorkerAPI
from .args import Config, ConfigError, parse_args
from .data import DataError, Shard, cut_shards
from .listener import EventListener, worker_informer_factory
from .master import Master
from .state import WorkerState, WorkerTable
from .tasks import FINISHED, WAIT, Task, TaskDispatcher, TaskError
from .workers import WorkerManager

__all__ = [
    "FINISHED", "WAIT", "Config", "ConfigError", "DataError", "EventListener", "Master", "Shard", "Task",
    "TaskDispatcher", "TaskError", "WorkerAPI", "WorkerManager", "WorkerState", "WorkerTable", "cut_shards",
    "parse_args", "worker_informer_factory",
]
