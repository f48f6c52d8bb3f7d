"""Fixtures of the interop suite: Go Sedna's binaries and Sedna's real SDK, skipped with the reason when absent.

* ``go_bins``: ``sedna-gm``/``sedna-lc`` from ``$SEDNA_GO_BIN_DIR`` (default ``../shared/go-sedna``), decompressed
  once into pytest's cache directory;
* ``sdk_python``: the interpreter of the SDK's virtualenv (``testkit.sdkenv``: ``$SEDNA_SDK_VENV``, default
  ``.pytest_cache/d/sedna-sdk-venv``), created once and reused; the SDK from ``$SEDNA_SDK_DIR`` (default
  ``../shared/sedna-sdk``);
* ``mixed``: our GM with Go's LCs, then Go's GM with our LCs (``testkit.interop.start_mixed``), one per way for a
  whole module.

Tests marked ``slow`` wait on Go's LC, which checks Datasets and triggers every 60 s (not configurable). The suite
leaves the host's ``/`` as it found it (``host_root_left_as_found``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from testkit import Processes
from testkit.gosedna import GoBinaries, go_binaries
from testkit.interop import MixedSedna, RootEntries, start_mixed
from testkit.sdkenv import default_sdk_venv, ensure_sdk_venv, sdk_lib


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: waits on Go's 60 s LC checks (minutes)")


@pytest.fixture(scope="session", autouse=True)
def host_root_left_as_found() -> Iterator[None]:
    """Fails the session when an entry appeared at the host's ``/`` while the suite ran: everything its programs
    write belongs under a test's temporary directory (Go's LC once left ``/il/models/deploy/model.pb`` there, the
    deploy Model it writes without its rootfs prefix, and its ``--help`` probe ``/rootfs/var/lib/sedna/database.db``,
    the database it opens at start). What appeared is named, not removed: another process may own it."""
    root = RootEntries()
    yield
    added = root.added()
    if added:
        pytest.fail(f"written outside the tests' temporary directories while test/interop ran (or by another "
                    f"process meanwhile): {', '.join(f'{root.root / name}' for name in added)}; remove them and "
                    f"give the test's objects paths under its tmp (MixedSedna.host_path)", pytrace=False)


@pytest.fixture(scope="session")
def go_bins(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> GoBinaries:
    cache = getattr(request.config, "cache", None)  # None with -p no:cacheprovider
    found = go_binaries(Path(cache.mkdir("go-sedna")) if cache is not None else tmp_path_factory.mktemp("go-sedna"))
    if isinstance(found, str):
        pytest.skip(found)
    return found


@pytest.fixture(scope="session")
def sdk_python() -> tuple[Path, str]:
    """``(the SDK's lib directory, its interpreter)``."""
    lib = sdk_lib()
    if lib is None:
        pytest.skip("Sedna's Python SDK not found (set SEDNA_SDK_DIR to a directory holding lib/sedna)")
    try:
        python = ensure_sdk_venv(default_sdk_venv())
    except RuntimeError as exc:
        pytest.skip(f"cannot create the SDK's virtualenv: {exc}")
    return lib, str(python)


MIXES = [pytest.param(("ours", "go"), id="our-gm+go-lc"), pytest.param(("go", "ours"), id="go-gm+our-lc")]


@pytest.fixture(scope="module", params=MIXES)
def mixed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, go_bins: GoBinaries
          ) -> Iterator[MixedSedna]:
    """One mixed system per way and module (starting one takes about 10 s): its tests keep apart by object and file
    names, and each removes what it leaves running."""
    gm, lc = request.param
    tmp = tmp_path_factory.mktemp(f"mixed-{gm}-gm-{lc}-lc")
    procs = Processes(tmp)
    try:
        system = start_mixed(procs, tmp, go_bins, gm, lc)
        yield system
        system.cs.close()
    finally:
        procs.cleanup()
