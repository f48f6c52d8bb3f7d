"""Developer scripts (CRD generation, local up, benchmarks); run as ``python -m hack.<name>``."""
