"""A real kubectl for sandbox tests: which binaries there are and a small runner.

kubectl is found on PATH, else as ``kubectl.1.*`` in /usr/bin or /usr/local/bin; versioned binaries next to the
one on PATH (``kubectl.1.27`` … ``kubectl.1.33``) are listed oldest first, so tests can exercise both ends.

    k = Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")
    k("get", "pods")                # CompletedProcess; raises AssertionError on a non-zero exit unless check=False
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .wait import wait_for

__all__ = ["MAIN_KUBECTL", "VERSIONED", "Kubectl", "requires_kubectl", "version_key"]


def version_key(path: str) -> tuple[int, ...]:
    """Sort key of a versioned kubectl binary (``kubectl.1.27`` → (1, 27))."""
    return tuple(int(x) for x in re.findall(r"\d+", os.path.basename(path)))


def _find_kubectls() -> tuple[str | None, list[str]]:
    """The kubectl to run full flows with, and versioned kubectl.1.* binaries (sorted oldest first)."""
    on_path = shutil.which("kubectl")
    dirs = ["/usr/bin", "/usr/local/bin"]
    if on_path:
        dirs.append(os.path.dirname(os.path.realpath(on_path)))
    versioned = sorted(
        {os.path.realpath(p) for d in dirs for p in glob.glob(os.path.join(d, "kubectl.1.*")) if os.access(p, os.X_OK)},
        key=version_key,
    )
    return on_path or (versioned[-1] if versioned else None), versioned


MAIN_KUBECTL, VERSIONED = _find_kubectls()
requires_kubectl = pytest.mark.skipif(
    MAIN_KUBECTL is None, reason="no kubectl on PATH and no kubectl.1.* in /usr/bin or /usr/local/bin"
)


class Kubectl:
    """Runs one kubectl binary against one kubeconfig, with its own discovery cache directory."""

    def __init__(self, binary: str, kubeconfig: str, cache_dir: Path) -> None:
        self.binary, self.kubeconfig, self.cache_dir = binary, kubeconfig, cache_dir

    def __call__(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess:
        cmd = [self.binary, f"--kubeconfig={self.kubeconfig}", f"--cache-dir={self.cache_dir}", *args]
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        return proc

    def apply(self, text: str, *extra: str) -> str:
        return self("apply", "-f", "-", *extra, stdin=text).stdout

    def wait_for_resource(self, plural: str, timeout: float = 10.0) -> None:
        """Until ``kubectl get <plural>`` succeeds (a CRD just created is being discovered)."""
        wait_for(f"kubectl get {plural} to succeed", lambda: self("get", plural, check=False),
                 check=lambda proc: proc.returncode == 0, timeout=timeout, interval=0.1)

    def table(self, *args: str) -> list[list[str]]:
        """``kubectl get ...`` output split into rows of cells (columns separated by two or more spaces)."""
        lines = self("get", *args).stdout.splitlines()
        return [re.split(r"\s{2,}", line.strip()) for line in lines if line.strip()]
