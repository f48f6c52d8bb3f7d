"""A real ``kubectl`` for tests against the sandbox: found on PATH, else as ``kubectl.1.*`` in /usr/bin or
/usr/local/bin (versioned binaries next to the one on PATH are listed too, oldest first).

    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")
    k("get", "pods")                    # raises AssertionError with stdout/stderr when it fails
    k("create", "cm", "x", check=False)  # the CompletedProcess either way
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

__all__ = ["MAIN_KUBECTL", "VERSIONED_KUBECTLS", "Kubectl"]


def _version_key(path: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", os.path.basename(path)))


def _find_kubectls() -> tuple[str | None, list[str]]:
    """The kubectl to run full flows with, and versioned kubectl.1.* binaries (sorted oldest first)."""
    on_path = shutil.which("kubectl")
    dirs = ["/usr/bin", "/usr/local/bin"]
    if on_path:
        dirs.append(os.path.dirname(os.path.realpath(on_path)))
    versioned = sorted(
        {os.path.realpath(p) for d in dirs for p in glob.glob(os.path.join(d, "kubectl.1.*")) if os.access(p, os.X_OK)},
        key=_version_key,
    )
    return on_path or (versioned[-1] if versioned else None), versioned


MAIN_KUBECTL, VERSIONED_KUBECTLS = _find_kubectls()


class Kubectl:
    """One kubectl binary bound to a kubeconfig and its own discovery cache directory; every run is bounded."""

    def __init__(self, binary: str, kubeconfig: str, cache_dir: Path) -> None:
        self.binary, self.kubeconfig, self.cache_dir = binary, kubeconfig, cache_dir

    def __call__(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [self.binary, f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache_dir}", *args]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=30)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def apply(self, text: str, *extra: str) -> str:
        return self("apply", "-f", "-", *extra, stdin=text).stdout

    def wait_for_resource(self, plural: str, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            proc = self("get", plural, check=False)
            if proc.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"kubectl get {plural} kept failing: {proc.stderr}")
            time.sleep(0.1)
