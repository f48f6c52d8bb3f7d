"""Developer scripts (CRD generation, local up, benchmarks); run as ``python -m hack.<name>`` from the repository
root. Installed with the project so that ``sedna-local-up`` (``hack.local_up``) runs from any directory."""
