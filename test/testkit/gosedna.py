"""Go Sedna's own ``sedna-gm`` and ``sedna-lc`` as test peers (built from kubeedge/sedna; never part of the project).

They are found at ``$SEDNA_GO_BIN_DIR`` (default ``../shared/go-sedna`` beside the repository), as ``sedna-gm`` and
``sedna-lc`` executables or xz-compressed (``sedna-gm.xz``, ``sedna-lc.xz``), which ``go_binaries`` decompresses once
into a cache directory (never into the tree). ``start_go_gm``/``start_go_lc`` run them as ``start_gm``/``start_lc``
run ours, through ``Processes`` (log in ``<tmp>/<name>.log``, killed at teardown):

* the GM is configured by a file (``kubeConfig``, ``namespace``, ``websocket``); its client-go uses 5 QPS / 10 burst;
* the LC by env only (``GM_ADDRESS``, ``NODENAME``, ``ROOTFS_MOUNT_DIR``, ``BIND_PORT``); its database is
  ``<rootfs>/var/lib/sedna/database.db``; it counts Datasets and checks triggers every 60 s (not configurable). It
  writes a deploy Model's file at the Model's URL without its rootfs prefix (``updateDeployModelFile``), so the
  Models of the tests that run it lie under their temporary directory (``MixedSedna.host_path``).

Unlike ours they cannot bind port 0 and say which port they got: they are given a port free a moment before, which
another process may take first. So a start counts only once the Go process itself listens on that port (its own
socket, looked up in ``/proc``, not merely something answering there), and a Go program that exits because the
port was taken is started again on another (``procs.retry_while_port_taken``).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .procs import Processes, free_port, port_open, retry_while_port_taken, shared_peer_dir
from .wait import wait_for

__all__ = ["GoBinaries", "go_binaries", "go_lc_connected", "go_sedna_dir", "start_go_gm", "start_go_lc"]

_CONNECTED = "websocket connects global manager"  # klog: "websocket connects global manager(address: …) successful"
_PORT_TAKEN = "address already in use"  # Go's "listen tcp 127.0.0.1:N: bind: address already in use"


@dataclass(frozen=True)
class GoBinaries:
    gm: Path
    lc: Path


def go_sedna_dir() -> Path:
    """``$SEDNA_GO_BIN_DIR``, else ``../shared/go-sedna`` (``shared_peer_dir``)."""
    return Path(os.environ.get("SEDNA_GO_BIN_DIR") or shared_peer_dir("go-sedna"))


def _binary(source: Path, name: str, cache: Path) -> Path | None:
    plain = source / name
    if plain.is_file() and os.access(plain, os.X_OK):
        return plain
    packed = source / f"{name}.xz"
    if not packed.is_file():
        return None
    stat = packed.stat()
    tag = hashlib.sha256(f"{packed.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    target = cache / f"{name}-{tag}"
    if not target.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(target.name + f".partial-{os.getpid()}")
        with lzma.open(packed) as src, open(partial, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        partial.chmod(0o755)
        os.replace(partial, target)
    return target


def go_binaries(cache: Path) -> GoBinaries | str:
    """The two binaries (decompressed into ``cache`` when needed), or why they are not at hand."""
    source = go_sedna_dir()
    found = {name: _binary(source, name, cache) for name in ("sedna-gm", "sedna-lc")}
    missing = [name for name, path in found.items() if path is None]
    if missing:
        return (f"Go Sedna's {' and '.join(missing)} not found in {source} (set SEDNA_GO_BIN_DIR to a directory "
                f"holding sedna-gm and sedna-lc, plain or .xz)")
    gm, lc = found["sedna-gm"], found["sedna-lc"]
    assert gm is not None and lc is not None
    # its database opens before its flags are read, at $ROOTFS_MOUNT_DIR/var/lib/sedna (default /rootfs): even
    # --help would make /rootfs/var/lib/sedna/database.db on the host
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sedna-lc-probe-", dir=cache) as rootfs:
        probe = subprocess.run([str(lc), "--help"], capture_output=True, timeout=30,
                               env={**os.environ, "ROOTFS_MOUNT_DIR": rootfs})
    if probe.returncode not in (0, 2) and b"Usage" not in probe.stdout + probe.stderr:
        return f"Go Sedna's sedna-lc does not run here: {(probe.stdout + probe.stderr)[-300:]!r}"
    return GoBinaries(gm, lc)


def start_go_gm(procs: Processes, binaries: GoBinaries, name: str, kubeconfig: str | Path,
                lc_server: str = "http://127.0.0.1:9100", timeout: float = 30.0) -> tuple[subprocess.Popen[bytes], int]:
    """Go's ``sedna-gm`` watching every namespace, its websocket on 127.0.0.1; returns the process and that port once
    the GM listens on it."""
    config = procs.tmp / f"{name}.json"

    def start(port: int) -> subprocess.Popen[bytes]:
        config.write_text(json.dumps({"kubeConfig": str(kubeconfig), "namespace": "",
                                      "websocket": {"address": "127.0.0.1", "port": port},
                                      "localController": {"server": lc_server}}))
        return procs.start(name, ["--config", str(config), "-v", "4"], program=str(binaries.gm))

    return _start_listening(procs, name, "Go's sedna-gm", start, timeout)


def start_go_lc(procs: Processes, binaries: GoBinaries, name: str, gm_address: str, rootfs: Path,
                wait_connected: bool = True, timeout: float = 60.0) -> tuple[subprocess.Popen[bytes], str]:
    """Go's ``sedna-lc`` for node ``name`` (rootfs and database under ``rootfs``, worker API on 127.0.0.1);
    returns the process and its worker API URL once it listens (and, with ``wait_connected``, reached the GM)."""
    rootfs.mkdir(parents=True, exist_ok=True)

    def start(port: int) -> subprocess.Popen[bytes]:
        env = {"GM_ADDRESS": gm_address, "NODENAME": name, "ROOTFS_MOUNT_DIR": str(rootfs), "BIND_PORT": str(port)}
        return procs.start(name, ["-v", "4"], env=env, program=str(binaries.lc))

    proc, port = _start_listening(procs, name, f"Go's sedna-lc {name}", start, timeout)
    if wait_connected:
        wait_for(f"Go's sedna-lc {name} to reach the GM", lambda: go_lc_connected(procs, name), timeout=timeout)
    return proc, f"http://127.0.0.1:{port}"


def _start_listening(procs: Processes, name: str, what: str, start: Callable[[int], subprocess.Popen[bytes]],
                     timeout: float) -> tuple[subprocess.Popen[bytes], int]:
    """``start(port)`` on a free port until the process listens on it (``retry_while_port_taken``: again on another
    port when it exited because the port was taken)."""

    def attempt() -> tuple[subprocess.Popen[bytes], int]:
        port = free_port()
        proc = start(port)
        _listening(what, proc, port, timeout)
        return proc, port

    proc, port = retry_while_port_taken(
        attempt, lambda started: started[0].poll() is not None and _PORT_TAKEN in procs.latest_log(name))
    assert proc.poll() is None, f"{what} exited:\n{procs.log(name)}"
    return proc, port


def _listening(what: str, proc: subprocess.Popen[bytes], port: int, timeout: float) -> None:
    """Waits until ``proc`` listens on ``port`` or exits."""
    wait_for(f"{what} to listen", lambda: listens(proc, port) or proc.poll() is not None, timeout=timeout)


def listens(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Whether ``proc`` itself listens on TCP ``port``: one of its descriptors is the listening socket of that port
    (Linux's ``/proc``); where there is no ``/proc``, whether anything accepts on 127.0.0.1:``port``."""
    descriptors = Path(f"/proc/{proc.pid}/fd")
    if not Path("/proc/net/tcp").exists():
        return port_open(port)
    sockets = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:  # sl local_address rem_address st ... inode
            fields = row.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                sockets.add(f"socket:[{fields[9]}]")
    try:
        links = [os.readlink(fd) for fd in descriptors.iterdir()]
    except OSError:  # the process is gone
        return False
    return not sockets.isdisjoint(links)


def go_lc_connected(procs: Processes, name: str) -> bool:
    return any(_CONNECTED in line and "successful" in line for line in procs.log(name).splitlines())
