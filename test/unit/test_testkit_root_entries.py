"""``testkit.interop.RootEntries``, the interop suite's check that the host's ``/`` is left as found."""

from __future__ import annotations

from pathlib import Path

from testkit.interop import RootEntries


def test_names_only_what_appeared_at_the_root(tmp_path: Path) -> None:
    (tmp_path / "usr").mkdir()
    root = RootEntries(tmp_path)
    assert root.added() == []
    (tmp_path / "il" / "models" / "deploy").mkdir(parents=True)  # what Go's LC once left at the host's /
    (tmp_path / "rootfs").mkdir()
    (tmp_path / "usr" / "inside").write_text("")  # below an entry that was there: not at the root
    assert root.added() == ["il", "rootfs"]


def test_an_entry_removed_is_not_reported(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    root = RootEntries(tmp_path)
    (tmp_path / "old").rmdir()
    assert root.added() == []
