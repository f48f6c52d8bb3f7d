"""sedna-gm: the cloud GlobalManager (config, app wiring, runtime helpers, controllers, leader election)."""

__version__ = "0.1.0"
