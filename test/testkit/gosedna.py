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
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .procs import Processes, free_port, port_open, shared_peer_dir
from .wait import wait_for

__all__ = ["GoBinaries", "go_binaries", "go_lc_connected", "go_sedna_dir", "start_go_gm", "start_go_lc"]

_CONNECTED = "websocket connects global manager"  # klog: "websocket connects global manager(address: …) successful"


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


def start_go_gm(procs: Processes, binaries: GoBinaries, name: str, kubeconfig: str | Path, edge_port: int,
                lc_server: str = "http://127.0.0.1:9100", timeout: float = 30.0) -> subprocess.Popen[bytes]:
    """Go's ``sedna-gm`` watching every namespace, its websocket on 127.0.0.1:``edge_port``; returns once that port
    accepts connections."""
    config = procs.tmp / f"{name}.json"
    config.write_text(json.dumps({"kubeConfig": str(kubeconfig), "namespace": "",
                                  "websocket": {"address": "127.0.0.1", "port": edge_port},
                                  "localController": {"server": lc_server}}))
    proc = procs.start(name, ["--config", str(config), "-v", "4"], program=str(binaries.gm))
    wait_for("Go's sedna-gm to listen", lambda: port_open(edge_port) or proc.poll() is not None, timeout=timeout)
    assert proc.poll() is None, procs.log(name)
    return proc


def start_go_lc(procs: Processes, binaries: GoBinaries, name: str, gm_address: str, rootfs: Path,
                port: int | None = None, wait_connected: bool = True,
                timeout: float = 60.0) -> tuple[subprocess.Popen[bytes], str]:
    """Go's ``sedna-lc`` for node ``name`` (rootfs and database under ``rootfs``, worker API on 127.0.0.1:``port``);
    returns the process and its worker API URL once it listens (and, with ``wait_connected``, reached the GM)."""
    port = port or free_port()
    rootfs.mkdir(parents=True, exist_ok=True)
    env = {"GM_ADDRESS": gm_address, "NODENAME": name, "ROOTFS_MOUNT_DIR": str(rootfs), "BIND_PORT": str(port)}
    proc = procs.start(name, ["-v", "4"], env=env, program=str(binaries.lc))
    wait_for(f"Go's sedna-lc {name} to listen", lambda: port_open(port) or proc.poll() is not None, timeout=timeout)
    assert proc.poll() is None, procs.log(name)
    if wait_connected:
        wait_for(f"Go's sedna-lc {name} to reach the GM", lambda: go_lc_connected(procs, name), timeout=timeout)
    return proc, f"http://127.0.0.1:{port}"


def go_lc_connected(procs: Processes, name: str) -> bool:
    return any(_CONNECTED in line and "successful" in line for line in procs.log(name).splitlines())
