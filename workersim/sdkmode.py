"""SDK mode: Sedna's real Python SDK (``lib/`` of kubeedge/sedna, given with ``--sdk-dir``) plays the worker, in a child
process of its own interpreter (``--sdk-python``: a virtualenv with the SDK's requirements), one per worker pod.

The child runs ``sdk_worker.py`` (standard library + the SDK only) with the pod's environment, its paths rewritten to
what the pod would see on this machine:

* a container path on a hostPath volume mounted in Sedna's layout (``/home/data/<host dir>``) → that host directory
  under the node's rootfs, and ``DATA_PATH_PREFIX`` → the rootfs, so that the SDK reports host paths as in a pod;
* a container path on any other hostPath volume (the model hot-update directory) → the directory the simulator
  opened when the pod started, through ``/proc/<simulator pid>/fd/<n>``: a directory replaced later is invisible;
* any other absolute path (the storage initializer's ``/downloads``, ``/tmp``) → a per-pod private directory;
* ``LC_SERVER`` → the LC of the pod's node.

Worker kinds the child has no driver for (FL aggregation, JI cloud, services whose SDK never reports) fall back to
the simulator's own plays. The child's output goes to the pod's log; its exit code ends a job-like pod.
"""

from __future__ import annotations

import json
import os
import posixpath
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from .nodefiles import NodeFiles
from .plays import WorkerContext, play_for

__all__ = ["SDK_DRIVERS", "SdkRunner", "rewrite_env", "sdk_runner"]

SDK_DRIVERS = frozenset({
    ("incrementallearningjob", "train"), ("incrementallearningjob", "eval"), ("incrementallearningjob", "inference"),
    ("lifelonglearningjob", "train"), ("lifelonglearningjob", "eval"),
    ("jointinferenceservice", "edge"), ("federatedlearningjob", "train"),
})
"""``(kind, worker type)`` that the child drives with the SDK's own worker classes and reporting."""

_WORKER_SCRIPT = Path(__file__).with_name("sdk_worker.py")
_DATA_PREFIX = "/home/data"
_BASE_ENV = ("PATH", "LANG", "LC_ALL", "TZ", "HOME", "SYSTEMROOT")
_STOP_GRACE = 5.0


def _rewrite(value: str, mounts: list[tuple[str, str]], private: Path) -> str:
    parts = []
    for part in value.split(";"):
        if not part.startswith("/") or part.startswith("/proc/"):
            parts.append(part)
            continue
        path = posixpath.normpath(part)
        for mount, local in mounts:
            if path == mount or path.startswith(mount.rstrip("/") + "/"):
                parts.append(local + path[len(mount):])
                break
        else:
            parts.append(str(private) + path)
    return ";".join(parts)


def rewrite_env(env: dict[str, str], mounts: list[tuple[str, str]], rootfs: Path | None,
                private: Path) -> dict[str, str]:
    """The pod's ``env`` as the child sees it (see the module doc); ``mounts``: (container path, local path)."""
    out = {}
    for name, value in env.items():
        if name == "DATA_PATH_PREFIX" and rootfs is not None and posixpath.normpath(value) == _DATA_PREFIX:
            out[name] = str(rootfs)
        else:
            out[name] = _rewrite(value, mounts, private)
    if "DATA_PATH_PREFIX" not in env and rootfs is not None:
        out["DATA_PATH_PREFIX"] = str(rootfs)
    return out


@dataclass(frozen=True)
class SdkRunner:
    """``lib``: the directory holding the ``sedna`` package; ``python``: the interpreter that runs it."""

    lib: Path
    python: str

    def run(self, ctx: WorkerContext, lc_url: str, files: NodeFiles | None) -> int | None:
        pod = ctx.pod
        if (pod.kind, pod.worker_type) not in SDK_DRIVERS:
            return play_for(pod)(ctx)
        if not ctx.sleep(ctx.steering.delay):
            return None
        with tempfile.TemporaryDirectory(prefix=f"workersim-{pod.name}-") as tmp:
            private = Path(tmp) / "container"
            private.mkdir()
            env = self._env(ctx, lc_url, files, private)
            ctx.log.info("SDK worker starting", python=self.python, driver=f"{pod.kind}/{pod.worker_type}")
            proc = subprocess.Popen([self.python, str(_WORKER_SCRIPT)], env=env, cwd=tmp, stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
            stopper = threading.Thread(target=self._stop_when, args=(ctx, proc), daemon=True,
                                       name=f"workersim-sdk-stop-{pod.name}")
            stopper.start()
            assert proc.stdout is not None
            last: list[str] = []
            for raw in proc.stdout:
                line = raw.decode(errors="replace").rstrip("\n")
                ctx.log.pod_log.append(line)
                last = [*last[-19:], line[:500]]
            code = proc.wait()
            stopped = ctx.stop.is_set()
            ctx.stop.set()  # ends the stopper
            stopper.join()
        if stopped:
            return None
        if code != 0:
            ctx.log.warning("SDK worker failed", exit_code=code, output="\n".join(last))
        ctx.log.info("SDK worker exited", exit_code=code)
        return code if _job_like(pod.kind, pod.worker_type) else None

    def _env(self, ctx: WorkerContext, lc_url: str, files: NodeFiles | None, private: Path) -> dict[str, str]:
        rootfs = files.rootfs if files is not None else None
        mounts = []
        for mount, fd_path in ctx.mounts.local_paths():
            host = ctx.pod.host_path(mount) or ""
            in_layout = rootfs is not None and mount == posixpath.join(_DATA_PREFIX, host.lstrip("/"))
            mounts.append((mount, str(files.path(host)) if in_layout and files is not None else fd_path))
        env = {k: os.environ[k] for k in _BASE_ENV if k in os.environ}
        env.update(rewrite_env(dict(ctx.pod.env), mounts, rootfs, private))
        steering = {"metrics": list(ctx.steering.metrics or ()), "rounds": ctx.steering.rounds,
                    "period": ctx.steering.period, "inferences": ctx.steering.inferences_per_period,
                    "hard_examples": ctx.steering.hard_examples_per_period, "fail": ctx.steering.fail,
                    "exit_code": ctx.steering.exit_code}
        env.update(LC_SERVER=lc_url, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1",
                   WORKERSIM_SDK_LIB=str(self.lib), WORKERSIM_WORKER=f"{ctx.pod.kind}/{ctx.pod.worker_type}",
                   WORKERSIM_MOUNTS=json.dumps(mounts), WORKERSIM_STEERING=json.dumps(steering))
        return env

    @staticmethod
    def _stop_when(ctx: WorkerContext, proc: subprocess.Popen[bytes]) -> None:
        ctx.stop.wait()
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(_STOP_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _job_like(kind: str, worker_type: str) -> bool:
    return worker_type in ("train", "eval") and kind != "jointinferenceservice"


def sdk_runner(sdk_dir: str, python: str) -> SdkRunner:
    """The runner for ``--sdk-dir`` (``lib/sedna`` inside it, or ``sedna`` itself) and ``--sdk-python``;
    ``ValueError`` saying what is missing."""
    root = Path(sdk_dir)
    for lib in (root / "lib", root):
        if (lib / "sedna" / "core" / "base.py").is_file():
            break
    else:
        raise ValueError(f"{sdk_dir!r} holds no Sedna SDK (lib/sedna/core/base.py)")
    if not os.access(python, os.X_OK):
        raise ValueError(f"{python!r} is not an executable interpreter")
    return SdkRunner(lib.resolve(), python if os.path.isabs(python) else str(Path(python).resolve()))
