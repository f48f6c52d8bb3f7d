"""sedna-gm: the cloud GlobalManager (config, app wiring, runtime helpers, controllers, the edge link in
``messagelayer``, leader election, the metrics/health server)."""

__version__ = "0.1.0"
