"""SIGTERM and SIGINT sent together, many times, to every program of the project: each must exit every time, with
its documented exit code (a handler that takes a lock — ``Event.set()``, a log call — can deadlock the main thread
that holds it, and the program then hangs for good; ``apis.signals`` is the pattern every program uses).

Each program is started, given time to settle into its steady state (ready), then sent both signals back to back.
The attempts run a few at a time (``BATCH`` processes of one program side by side, each on its own name, port and
node), which keeps the number of attempts at a fraction of the time."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from testkit import (
    Processes,
    gm_edge_address,
    http_get,
    log_event,
    start_gm,
    start_lc,
    start_sandbox,
    start_workersim,
    wait_for,
)

pytestmark = pytest.mark.e2e

ATTEMPTS = 20
BATCH = 4  # attempts started side by side
EXIT_TIMEOUT = 30.0  # far beyond a clean stop: a hang fails here


@dataclass(frozen=True)
class Env:
    procs: Processes
    kubeconfig: str
    gm_edge: str  # the module GM's edge address, for the LCs
    tmp: Path


@pytest.fixture(scope="module")
def env(module_procs: Processes, module_cluster, module_tmp: Path) -> Iterator[Env]:
    kubeconfig, _cs = module_cluster
    start_gm(module_procs, "module-gm", kubeconfig, "--no-leader-elect", wait=True)
    yield Env(module_procs, kubeconfig, gm_edge_address(module_procs, "module-gm"), module_tmp)


def _sandbox(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    return start_sandbox(env.procs, env.tmp / f"sandbox-{attempt}.kubeconfig", name=f"sandbox-{attempt}")


def _gm(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    proc, _url = start_gm(env.procs, f"gm-{attempt}", env.kubeconfig, "--no-leader-elect", wait=True)
    return proc


def _lc(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    # one LC per node at a time: the attempts of one batch are different nodes
    node = f"edge-signals-{attempt % BATCH}"
    proc, url = start_lc(env.procs, node, env.gm_edge, env.tmp / node)  # logs appended
    wait_for("sedna-lc connected", lambda: http_get(url + "/readyz")[0] == 200 or proc.poll() is not None,
             timeout=30)
    return proc


def _workersim(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    return start_workersim(env.procs, env.kubeconfig, name=f"workersim-{attempt}")


def _master(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    data = env.tmp / "master-data.txt"
    data.write_text("".join(f"record-{i}\n" for i in range(8)))
    name = f"master-{attempt}"
    proc = env.procs.start(name, ["-m", "examples.elasticdl_master", "--job_name", f"signals-{attempt}",
                                      "--training_data", str(data), "--num_workers", "1", "--worker_image", "w:ci",
                                      "--kubeconfig", env.kubeconfig, "--port", "0", "--host", "127.0.0.1",
                                      "--log_format", "json"])
    wait_for("the master's worker API",
             lambda: log_event(env.procs.log(name), "serving the worker API") or proc.poll() is not None,
             timeout=30)
    return proc


def _local_up(env: Env, attempt: int) -> subprocess.Popen[bytes]:
    """The main job, signalled while it runs (its children just started, the job under way)."""
    name = f"local_up-{attempt}"
    proc = env.procs.start(name, ["-m", "hack.local_up", "--workdir", str(env.tmp / name)])
    wait_for("local_up's job under way",
             lambda: "the worker simulator is ready" in env.procs.log(name) or proc.poll() is not None, timeout=90)
    return proc


# name → (start, exit codes the docs give for a stop by signal, attempts)
PROGRAMS: dict[str, tuple[Callable[[Env, int], subprocess.Popen[bytes]], tuple[int, ...], int]] = {
    "sandbox": (_sandbox, (0,), ATTEMPTS),  # docs/sandbox.md: SIGTERM/SIGINT exit 0
    # docs/globalmanager.md: a signal exits 0 after a clean stop, a second signal exits 1 at once
    "gm": (_gm, (0, 1), ATTEMPTS),
    "edge-signals": (_lc, (0,), ATTEMPTS),  # docs/edge.md: SIGTERM/SIGINT exit 0
    "workersim": (_workersim, (0,), ATTEMPTS),  # docs/sandbox.md: SIGTERM/SIGINT exit 0
    "master": (_master, (1,), ATTEMPTS),  # stopped before the data is consumed: the job did not succeed
    # docs/globalmanager.md: a signal before the jobs are done stops every child (each exits 0) and exits 1;
    # five processes per attempt, so fewer attempts
    "local_up": (_local_up, (1,), 3),
}


def _log_name(program: str, attempt: int) -> str:
    return f"edge-signals-{attempt % BATCH}" if program == "edge-signals" else f"{program}-{attempt}"


def _stop_attempts(env: Env, program: str, attempts: int, signal_batch: Callable[[list[subprocess.Popen[bytes]],
                   range], None], how: Callable[[int], str]) -> Iterator[tuple[int, int, str]]:
    """Start ``program`` ``attempts`` times, ``BATCH`` side by side, each batch signalled by ``signal_batch(procs,
    attempts)``; yields ``(attempt, exit code, log)`` of each (a hang fails the test, with ``how(attempt)``)."""
    start = PROGRAMS[program][0]
    for first in range(0, attempts, BATCH):
        batch = range(first, min(first + BATCH, attempts))
        with ThreadPoolExecutor(len(batch)) as pool:
            procs = list(pool.map(lambda attempt: start(env, attempt), batch))
        for attempt, proc in zip(batch, procs, strict=True):
            assert proc.poll() is None, env.procs.log(_log_name(program, attempt))[-3000:]
        signal_batch(procs, batch)
        for attempt, proc in zip(batch, procs, strict=True):
            log_name = _log_name(program, attempt)
            try:
                code = proc.wait(EXIT_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail(f"{program} hung after {how(attempt)} (attempt {attempt + 1}):\n"
                            + env.procs.log(log_name)[-3000:])
            yield attempt, code, env.procs.log(log_name)


@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_sigterm_and_sigint_together_stop_the_program_every_time(env: Env, program: str):
    _, codes, attempts = PROGRAMS[program]

    def both(procs: list[subprocess.Popen[bytes]], _attempts: range) -> None:
        for proc in procs:
            os.kill(proc.pid, signal.SIGTERM)
            os.kill(proc.pid, signal.SIGINT)

    for attempt, code, log in _stop_attempts(env, program, attempts, both, lambda _: "SIGTERM+SIGINT"):
        assert code in codes, f"attempt {attempt + 1}: exit code {code}\n" + log[-3000:]
        if program == "gm" and code == 1:
            assert "second signal: exiting at once" in log
        if program == "local_up":
            for child in ("workersim", "edge-node-2", "edge-node-1", "sedna-gm", "sandbox API server"):
                assert f"==> {child} stopped (exit code 0)" in log


# SIGTERM, then SIGINT this many seconds later (10 … 100 ms, each gap twice): the second signal lands while the
# program stops, after it logged "stopped", or while the interpreter finalizes (where Python puts the default action
# back on every signal it handled: the process died of SIGINT, exit status -2, in 3 of 10 tries for sedna-lc)
GAPS = [0.01 * (1 + i % 10) for i in range(ATTEMPTS)]


@pytest.mark.parametrize("program", ["gm", "edge-signals"])
def test_sigterm_then_sigint_a_little_later_gives_only_documented_exit_codes(env: Env, program: str):
    codes = PROGRAMS[program][1]

    def signal_twice(proc: subprocess.Popen[bytes], gap: float) -> None:
        os.kill(proc.pid, signal.SIGTERM)
        time.sleep(gap)  # the stimulus's timing, not a wait for something to happen
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGINT)

    def each_with_its_gap(procs: list[subprocess.Popen[bytes]], attempts: range) -> None:
        with ThreadPoolExecutor(len(procs)) as pool:
            list(pool.map(signal_twice, procs, [GAPS[attempt] for attempt in attempts]))

    def how(attempt: int) -> str:
        return f"SIGTERM, then SIGINT {GAPS[attempt] * 1000:.0f} ms later"

    for attempt, code, log in _stop_attempts(env, program, ATTEMPTS, each_with_its_gap, how):
        assert code in codes, f"{how(attempt)} (attempt {attempt + 1}): exit code {code}\n" + log[-3000:]
