"""Worked examples built on the library packages (``apis``, ``informers``, ``workqueue``) alone."""
