"""Sedna's real Python SDK for tests: where it is, and a separate virtualenv that runs it.

The SDK (``lib/`` of kubeedge/sedna, what runs inside every Sedna worker image) is never part of the project: it is
found at ``$SEDNA_SDK_DIR`` (default ``../shared/sedna-sdk`` beside the repository; ``lib/sedna`` inside it) and
run by its own interpreter: a virtualenv with its light requirements (below) and a tiny stand-in ``tensorflow``
module, so that its default backend (``BACKEND_TYPE=TENSORFLOW``) imports without the real one. The heavy extras
(tensorflow, fastapi, uvicorn, pycocotools, plato, opencv) are left out: the tests drive the SDK's worker classes
with a small fake estimator.

    python = ensure_sdk_venv(Path(".pytest_cache/d/sedna-sdk-venv"))   # created once, then reused

``python -m testkit.sdkenv DIR`` (``PYTHONPATH=test``) creates it ahead of the tests, as ``.ci/run`` does.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from .procs import REPO, shared_peer_dir

__all__ = ["SDK_REQUIREMENTS", "default_sdk_venv", "ensure_sdk_venv", "sdk_dir", "sdk_lib"]

SDK_REQUIREMENTS = ("numpy", "requests", "PyYAML", "tenacity", "joblib", "pandas", "six", "colorlog", "minio",
                    "websockets")
"""The SDK's requirements (lib/requirements.txt) that its worker classes import, unpinned: the SDK's own pins
(e.g. ``websockets~=9.1``) predate the Python versions this project supports."""

# What TFBackend touches at import and construction (tf.compat.v1.ConfigProto/Session, tf.Graph): no more.
_TENSORFLOW_STAND_IN = '''"""A stand-in for tensorflow: just what sedna.backend.tensorflow touches when it imports and builds a backend."""
import contextlib

__version__ = "0.0.0-stand-in"


class ConfigProto:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class Session:
    def __init__(self, *args, **kwargs):
        pass

    def close(self):
        pass


class Graph:
    def as_default(self):
        return contextlib.nullcontext(self)


def reset_default_graph():
    pass


class _V1:
    ConfigProto = ConfigProto
    Session = Session
    reset_default_graph = staticmethod(reset_default_graph)


class compat:
    v1 = _V1
'''

_STAMP = "sedna-sdk-venv.stamp"


def sdk_dir() -> Path:
    """``$SEDNA_SDK_DIR``, else ``../shared/sedna-sdk`` (``shared_peer_dir``)."""
    return Path(os.environ.get("SEDNA_SDK_DIR") or shared_peer_dir("sedna-sdk"))


def sdk_lib() -> Path | None:
    """The directory to put on ``sys.path`` for ``import sedna`` (``<sdk>/lib``, or the dir itself), or None."""
    root = sdk_dir()
    for candidate in (root / "lib", root):
        if (candidate / "sedna" / "core" / "base.py").is_file():
            return candidate
    return None


def default_sdk_venv() -> Path:
    """Where the fixtures keep the SDK's virtualenv: ``$SEDNA_SDK_VENV``, else pytest's cache directory."""
    return Path(os.environ.get("SEDNA_SDK_VENV") or REPO / ".pytest_cache" / "d" / "sedna-sdk-venv")


def _fingerprint() -> str:
    return hashlib.sha256(repr((SDK_REQUIREMENTS, _TENSORFLOW_STAND_IN, sys.version_info[:2])).encode()).hexdigest()


def _python(venv: Path) -> Path:
    return venv / "bin" / "python"


def ensure_sdk_venv(venv: Path, log: Path | None = None) -> Path:
    """The interpreter of the SDK's virtualenv at ``venv``, created (about a minute; pip's output in ``log``) unless
    one with the same requirements is there. Raises ``RuntimeError`` with pip's last lines when it cannot."""
    stamp = venv / _STAMP
    if stamp.is_file() and stamp.read_text() == _fingerprint() and _python(venv).is_file():
        return _python(venv)
    venv.parent.mkdir(parents=True, exist_ok=True)
    log = log or venv.parent / "sedna-sdk-venv.log"
    started = time.monotonic()
    with open(log, "ab") as out:
        steps = [[sys.executable, "-m", "venv", "--clear", str(venv)],
                 [str(_python(venv)), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                  *SDK_REQUIREMENTS]]
        for argv in steps:
            done = subprocess.run(argv, stdout=out, stderr=subprocess.STDOUT, timeout=900)
            if done.returncode != 0:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"creating the SDK's virtualenv failed ({' '.join(argv[:4])} …): {tail}")
    site = subprocess.run([str(_python(venv)), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "tensorflow.py").write_text(_TENSORFLOW_STAND_IN)
    stamp.write_text(_fingerprint())
    with open(log, "a") as out:
        out.write(f"created {venv} in {time.monotonic() - started:.0f}s\n")
    return _python(venv)


if __name__ == "__main__":
    if sdk_lib() is None:
        print(f"no Sedna SDK at {sdk_dir()}: no virtualenv made (its tests skip)")
        sys.exit(0)
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default_sdk_venv()
    begin = time.monotonic()
    print(f"SDK virtualenv: {ensure_sdk_venv(target)} ({time.monotonic() - begin:.0f}s)")
