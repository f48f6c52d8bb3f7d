"""sedna-lc: the edge LocalController (config, SQLite store, GM client, worker API, managers)."""

__version__ = "0.1.0"
