"""sedna-lc: the edge LocalController (config, SQLite store, GM client, worker API, managers, storage, triggers)."""

__version__ = "0.1.0"
