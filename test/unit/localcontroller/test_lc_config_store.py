"""sedna-lc settings (flag over env over default, exit 2 naming the setting) and its SQLite store."""

from __future__ import annotations

import sqlite3

import pytest

from localcontroller.app import main
from localcontroller.config import SettingError, load_settings
from localcontroller.store import Store


@pytest.fixture
def rootfs(tmp_path):
    path = tmp_path / "rootfs"
    path.mkdir()
    return path


def test_defaults_and_sedna_environment_variables(rootfs):
    env = {"GM_ADDRESS": "gm.sedna:9000", "NODENAME": "edge-1", "ROOTFS_MOUNT_DIR": str(rootfs), "BIND_PORT": "9200"}
    cfg, version = load_settings([], env)
    assert not version
    assert cfg.gm_url == "ws://gm.sedna:9000/"
    assert (cfg.node_name, cfg.rootfs, cfg.bind_host, cfg.bind_port) == ("edge-1", str(rootfs), "0.0.0.0", 9200)
    assert (cfg.health_probe_host, cfg.health_probe_port) == ("0.0.0.0", 9101)
    assert cfg.db_path == str(rootfs / "var/lib/sedna/database.db")
    assert cfg.dataset_check_period == 60 and cfg.token == "" and cfg.log_level == "info"


def test_flags_override_the_environment(rootfs, tmp_path):
    token = tmp_path / "token"
    token.write_text("  t0k3n\n")
    env = {"GM_ADDRESS": "gm:1", "NODENAME": "from-env", "ROOTFS_MOUNT_DIR": "/nope", "BIND_PORT": "1"}
    cfg, _ = load_settings(["--gm-address", "wss://gm.example:9443/edge", "--node-name", "edge-2", "--rootfs",
                            str(rootfs), "--bind-address", "127.0.0.1:9300", "--health-probe-address", "[::1]:0",
                            "--db", str(tmp_path / "x.db"),
                            "--token-file", str(token), "--dataset-check-period", "0.5", "--log-level", "debug",
                            "--log-format", "json"], env)
    assert cfg.gm_url == "wss://gm.example:9443/edge" and cfg.node_name == "edge-2"
    assert (cfg.bind_host, cfg.bind_port, cfg.db_path) == ("127.0.0.1", 9300, str(tmp_path / "x.db"))
    assert (cfg.health_probe_host, cfg.health_probe_port) == ("::1", 0)
    assert cfg.token == "t0k3n" and cfg.dataset_check_period == 0.5 and cfg.log_format == "json"
    assert cfg.token_file == str(token)  # read again on each connection attempt


def test_hostname_is_the_last_resort_for_the_node_name(rootfs):
    cfg, _ = load_settings(["--gm-address", "gm:9000", "--rootfs", str(rootfs)], {"HOSTNAME": "node-a"})
    assert cfg.node_name == "node-a"


def test_a_ca_file_means_wss(rootfs, tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    cfg, _ = load_settings(["--gm-address", "gm:9000", "--node-name", "n", "--rootfs", str(rootfs),
                            "--gm-ca-file", str(ca)], {})
    assert cfg.gm_url == "wss://gm:9000/"


@pytest.mark.parametrize(
    ("argv", "env", "setting"),
    [
        ([], {"NODENAME": "n"}, "--gm-address (GM_ADDRESS)"),
        (["--gm-address", "gm"], {"NODENAME": "n"}, "--gm-address"),
        (["--gm-address", "http://gm:1"], {"NODENAME": "n"}, "--gm-address"),
        (["--gm-address", "gm:1"], {"NODENAME": "Bad_Name"}, "--node-name (NODENAME)"),
        (["--gm-address", "gm:1"], {}, "--node-name"),
        (["--gm-address", "gm:1", "--node-name", "n", "--bind-address", "x:99999"], {}, "--bind-address"),
        (["--gm-address", "gm:1", "--node-name", "n"], {"BIND_PORT": "abc"}, "--bind-address (BIND_PORT)"),
        (["--gm-address", "gm:1", "--node-name", "n", "--health-probe-address", "9101"], {},
         "--health-probe-address"),
        (["--gm-address", "gm:1", "--node-name", "n", "--dataset-check-period", "0"], {}, "--dataset-check-period"),
        (["--gm-address", "gm:1", "--node-name", "n", "--dataset-check-period", "nan"], {},
         "--dataset-check-period"),
        (["--gm-address", "gm:1", "--node-name", "n", "--token-file", "/no/such/file"], {}, "--token-file"),
        (["--gm-address", "gm:1", "--node-name", "n", "--gm-ca-file", "/no/such/file"], {}, "--gm-ca-file"),
    ],
)
def test_a_bad_setting_is_named(rootfs, argv, env, setting):
    if "--rootfs" not in argv:
        argv = [*argv, "--rootfs", str(rootfs)]
    with pytest.raises(SettingError) as info:
        load_settings(argv, env)
    assert info.value.setting == setting


def test_a_missing_rootfs_is_named(tmp_path):
    with pytest.raises(SettingError) as info:
        load_settings(["--gm-address", "gm:1", "--node-name", "n"], {"ROOTFS_MOUNT_DIR": str(tmp_path / "none")})
    assert info.value.setting == "--rootfs (ROOTFS_MOUNT_DIR)"


def test_main_exits_2_naming_the_setting_and_prints_the_version(capsys, rootfs, tmp_path, monkeypatch):
    monkeypatch.setattr("localcontroller.app.configure_logging", lambda *a, **k: None)  # keep the test's logging
    assert main(["--gm-address", "gm:1", "--node-name", "n", "--rootfs", str(rootfs), "--dataset-check-period",
                 "-1"]) == 2
    assert "--dataset-check-period" in capsys.readouterr().err
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["--gm-address", "gm:1", "--node-name", "n", "--rootfs", str(rootfs), "--db",
                 str(blocker / "db.sqlite"), "--log-format", "json"]) == 2
    assert "--db" in capsys.readouterr().err
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("sedna-lc ")


def test_store_survives_a_reopen_and_keeps_its_epoch(tmp_path):
    path = str(tmp_path / "sub" / "lc.db")
    store = Store(path)
    epoch = store.epoch
    store.put_resource("dataset", "ns", "d1", {"spec": {"url": "/a"}})
    store.put_state("dataset/ns/d1/numberOfSamples", 4)
    first = store.add_report("ns", "Dataset", "d1", b'{"numberOfSamples":4}')
    second = store.add_report("ns", "Dataset", "d1", b'{"numberOfSamples":5}')
    store.remove_report(first)
    store.close()
    again = Store(path)
    assert again.epoch == epoch
    assert again.resources() == [("dataset", "ns", "d1", {"spec": {"url": "/a"}})]
    assert again.get_state("dataset/ns/d1/numberOfSamples") == 4
    assert [e.seq for e in again.iter_reports()] == [second] and again.pending_reports() == 1
    assert again.add_report("ns", "Dataset", "d1", b"{}") > second  # sequence numbers are never reused
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    again.close()


def test_store_tables_do_not_clash_with_a_go_sedna_database(tmp_path):
    path = tmp_path / "database.db"
    go = sqlite3.connect(path)
    go.execute("CREATE TABLE resources (id INTEGER PRIMARY KEY, name TEXT UNIQUE, type_meta TEXT)")
    go.commit()
    go.close()
    store = Store(str(path))
    store.put_resource("model", "ns", "m", {})
    assert store.get_resource("model", "ns", "m") == {}
    store.close()
