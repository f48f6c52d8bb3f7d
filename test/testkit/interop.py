"""A mixed Sedna for the interop suite (``test/interop``): the sandbox API server, one GM and two edge nodes'
LCs, one half ours and the other Go Sedna's (``gosedna``), and the worker simulator playing the workers (or Sedna's
real SDK in them, ``sdk=``).

    edge = start_mixed(procs, tmp, go, gm="ours", lc="go")    # our sedna-gm, Go's sedna-lc on edge-1 and edge-2
    edge.create("datasets", "Dataset", "ds", {...}); edge.holds("edge-1", "dataset", "ds")

Every program writes under ``tmp``: a node's host path ``P`` is ``<tmp>/rootfs-<node>/P``, and the Models' URLs are
host paths under ``tmp`` too (``host_path``), because Go's LC writes a deploy Model's file at its URL without the
rootfs prefix (on a cluster: into its own container). ``RootEntries`` checks that the host's ``/`` is left as found.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apis.clientset import Clientset

from .gosedna import GoBinaries, start_go_gm, start_go_lc
from .lc import lc_resource
from .procs import (
    Processes,
    gm_edge_address,
    start_gm,
    start_lc,
    start_sandbox,
    start_workersim,
)
from .wait import wait_for

__all__ = ["NODES", "NS", "MixedSedna", "RootEntries", "start_mixed"]

NS = "default"
NODES = ("edge-1", "edge-2")


@dataclass
class MixedSedna:
    procs: Processes
    cs: Clientset
    kubeconfig: Path
    gm: str  # "ours" or "go"
    lc: str
    gm_address: str
    rootfs: dict[str, Path]
    lc_urls: dict[str, str] = field(default_factory=dict)
    workersim_args: tuple[str, ...] = ()

    def start_workersim(self) -> None:
        """(Re)start the worker simulator: a running one first stops as on SIGTERM (its workers with it)."""
        old = self.procs.procs.get("workersim")
        if old is not None and old.poll() is None:
            old.terminate()
            old.wait(30)
        start_workersim(self.procs, self.kubeconfig, self.lc_urls, self.rootfs, *self.workersim_args)

    def restart_gm(self) -> None:
        """Kill our GM (SIGKILL) and start it again on the same edge port (the LCs keep its address)."""
        assert self.gm == "ours"
        gm = self.procs.procs["gm"]
        gm.kill()
        gm.wait(30)
        port = int(self.gm_address.rsplit(":", 1)[1])
        start_gm(self.procs, "gm", str(self.kubeconfig), "--no-leader-elect", edge_port=port, wait=True, timeout=60)

    def create(self, resource: str, kind: str, name: str, spec: dict[str, Any],
               annotations: dict[str, str] | None = None) -> dict[str, Any]:
        md: dict[str, Any] = {"name": name, "namespace": NS}
        if annotations:
            md["annotations"] = annotations
        return self.client(resource).create({"apiVersion": "sedna.io/v1alpha1", "kind": kind, "metadata": md,
                                             "spec": spec})

    def client(self, resource: str) -> Any:
        return getattr(self.cs.sedna_v1alpha1(), resource)(NS)

    def get(self, resource: str, name: str) -> dict[str, Any]:
        return self.client(resource).get(name)

    def status(self, resource: str, name: str) -> dict[str, Any]:
        return self.get(resource, name).get("status") or {}

    def host_path(self, path: str) -> str:
        """``path`` moved under this system's temporary directory (``/m/x.pb`` -> ``<tmp>/hostpaths/m/x.pb``): a
        host path that an LC writing without its rootfs prefix (Go's, a deploy Model's file) writes under ``tmp``."""
        return f"{self.procs.tmp.resolve()}/hostpaths/{path.lstrip('/')}"

    def write(self, node: str, host_path: str, text: str) -> Path:
        path = self.rootfs[node] / host_path.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(text)
        partial.replace(path)
        return path

    def holds(self, node: str, kind: str, name: str) -> bool:
        """Whether the LC of ``node`` keeps the object (``kind`` lower-case) in its database."""
        if self.lc == "go":
            return go_lc_holds(self.rootfs[node], kind, NS, name)
        return lc_resource(self.rootfs[node], kind, NS, name) is not None

    def log(self, name: str) -> str:
        return self.procs.log(name)


class RootEntries:
    """The names in a directory (the host's ``/``) when made; ``added()``: those there now that were not then. A
    test's programs write under its temporary directory only: an entry added at ``/`` is what one wrote outside."""

    def __init__(self, root: Path = Path("/")) -> None:
        self.root = root
        self.before = frozenset(os.listdir(root))

    def added(self) -> list[str]:
        return sorted(set(os.listdir(self.root)) - self.before)


def go_lc_holds(rootfs: Path, kind: str, namespace: str, name: str) -> bool:
    """Go's LC keeps ``<namespace>/<kind>/<name>`` in table ``resources`` of ``<rootfs>/var/lib/sedna/database.db``."""
    path = rootfs / "var/lib/sedna/database.db"
    if not path.exists():
        return False
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        row = db.execute("SELECT 1 FROM resources WHERE name = ? AND deleted_at IS NULL",
                         (f"{namespace}/{kind}/{name}",)).fetchone()
    except sqlite3.OperationalError:  # not created yet, or locked for longer than the timeout
        return False
    finally:
        db.close()
    return row is not None


def start_mixed(procs: Processes, tmp: Path, go: GoBinaries, gm: str, lc: str, workersim: bool = True,
                workersim_args: tuple[str, ...] = ()) -> MixedSedna:
    """The sandbox, a GM (``gm``: ``ours``/``go``), the LCs of ``NODES`` (``lc``), connected, and the worker
    simulator (its reports retried 5 times 0.2 s apart) with ``workersim_args``."""
    kubeconfig = tmp / "kubeconfig"
    start_sandbox(procs, kubeconfig)
    cs = Clientset.from_kubeconfig(str(kubeconfig))
    if gm == "go":
        gm_address = f"127.0.0.1:{start_go_gm(procs, go, 'gm', kubeconfig)[1]}"
    else:
        start_gm(procs, "gm", str(kubeconfig), "--no-leader-elect", wait=True, timeout=60)
        gm_address = gm_edge_address(procs)
    system = MixedSedna(procs, cs, kubeconfig, gm, lc, gm_address,
                        {n: tmp / f"rootfs-{n}" for n in NODES}, workersim_args=workersim_args)
    for node in NODES:
        if lc == "go":
            _, url = start_go_lc(procs, go, node, system.gm_address, system.rootfs[node])
        else:
            _, url = start_lc(procs, node, system.gm_address, system.rootfs[node], "--dataset-check-period", "0.3")
        system.lc_urls[node] = url
    if lc != "go":
        from .procs import http_get

        for node, url in system.lc_urls.items():
            wait_for(f"{node} connected", lambda u=url: http_get(u + "/readyz")[0] == 200, timeout=60)
    if workersim:
        system.start_workersim()
    return system
