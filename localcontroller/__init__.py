"""sedna-lc: the edge LocalController (not implemented yet)."""
