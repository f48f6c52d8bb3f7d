"""The master's command line: ElasticDL's flags, and the master pod the ElasticAIJob operator builds starts it."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import yaml

from examples.elasticdl_master.app import main
from examples.elasticdl_master.args import ConfigError, parse_args
from globalmanager.controllers.elasticdl.pods import build_master_pod
from globalmanager.controllers.elasticdl.spec import parse_spec

SAMPLE = Path(__file__).resolve().parents[4] / "charts" / "sedna" / "samples" / "elasticaijob.yaml"
BASE = ["--job_name", "mnist", "--training_data", "/data", "--worker_image", "img"]


def operator_master_flags(job: dict) -> list[str]:
    """The flags in the command line of the master pod the operator creates for ``job``."""
    pod = build_master_pod(job, parse_spec(job))
    container = pod["spec"]["containers"][0]
    assert container["command"] == ["/bin/bash"] and container["args"][0] == "-c"
    tokens = shlex.split(container["args"][1])
    entry = tokens.index("elasticdl.python.master.main")
    assert tokens[: entry + 1] == ["set", "-o", "pipefail;", "python", "-m", "elasticdl.python.master.main"]
    return tokens[entry + 1:]


def test_the_master_pod_the_operator_builds_from_the_sample_starts_this_master_unchanged():
    job = yaml.safe_load(SAMPLE.read_text())
    job["metadata"].update(namespace="team-a", generation=1, uid="u1")
    config = parse_args(operator_master_flags(job))
    assert (config.job_name, config.namespace) == ("mnist-training", "team-a")
    assert config.training_data == "/data/mnist/train"
    assert config.num_epochs == 2 and config.records_per_task == 64 * 2
    assert config.num_workers == 4 and config.worker_image == "elasticdl/elasticdl:mnist-v0.2.0"
    assert config.worker_resource_request == "cpu=2,memory=2048Mi" and config.worker_pod_priority == "high=0.5"
    assert config.volume == "host_path=/data,mount_path=/data"
    assert {"--model_zoo", "--model_def", "--validation_data", "--evaluation_steps", "--num_ps_pods",
            "--ps_resource_request", "--master_resource_request"} <= set(config.ignored)


def test_elasticdl_defaults_and_seed_aliases():
    config = parse_args(["--job_name", "j", "--data", "/d", "--image_name", "img", "--num_epoch", "3",
                         "--batch_size", "10", "--max_workers", "8"])
    assert (config.training_data, config.num_epochs, config.records_per_task) == ("/d", 3, 10 * 8)
    assert (config.worker_image, config.num_workers, config.max_workers, config.port) == ("img", 2, 8, 50001)
    assert (config.namespace, config.image_pull_policy, config.restart_policy) == ("default", "Always", "Never")
    assert config.worker_resource_request == "cpu=1,memory=4096Mi" and config.worker_progress_timeout == 0


def test_records_per_task_wins_over_minibatches():
    assert parse_args([*BASE, "--records_per_task", "5", "--minibatch_size", "64"]).records_per_task == 5


@pytest.mark.parametrize("flags, timeout", [
    (["--relaunch_timeout_worker"], 300.0),  # ElasticDL's bool flag: alone it flips the default
    (["--relaunch_timeout_worker", "true"], 300.0),
    (["--relaunch_timeout_worker", "false"], 0.0),
    (["--relaunch_timeout_worker", "--worker_progress_timeout", "7"], 7.0),
])
def test_stuck_worker_removal_follows_elasticdls_relaunch_timeout_worker(flags, timeout):
    assert parse_args([*BASE, *flags]).worker_progress_timeout == timeout


def test_local_flags_are_not_passed_on_to_workers():
    config = parse_args([*BASE, "--kubeconfig", "/k", "--master=http://x", "--log_format", "json", "--model_zoo", "/mz"])
    assert config.worker_flags == [*BASE, "--model_zoo", "/mz"]
    assert config.ignored == ["--model_zoo"]


@pytest.mark.parametrize("flags, flag", [
    (["--num_workers", "-1"], "num_workers"),
    (["--num_workers", "9", "--max_workers", "4"], "max_workers"),
    (["--training_data", ""], "training_data"),
    (["--worker_image", "", "--image_name", ""], "worker_image"),
    (["--minibatch_size", "0"], "minibatch_size"),
    (["--num_minibatches_per_task", "0"], "num_minibatches_per_task"),
    (["--records_per_task", "-3"], "records_per_task"),
    (["--port", "70000"], "port"),
    (["--max_task_retries", "0"], "max_task_retries"),
    (["--relaunch_backoff_base", "10", "--relaunch_backoff_max", "1"], "relaunch_backoff_base"),
    (["--worker_resource_request", "cpu"], "worker_resource_request"),
    (["--worker_resource_limit", "bogus=1"], "worker_resource_limit"),
    (["--volume", "mount_path=/d"], "volume"),
    (["--worker_pod_priority", "high=half"], "worker_pod_priority"),
    (["--envs", "novalue"], "envs"),
])
def test_bad_values_name_the_flag(flags, flag):
    with pytest.raises(ConfigError) as exc:
        parse_args([*BASE, *flags])
    assert exc.value.flag == flag and str(exc.value).startswith(f"--{flag}: ")


def test_main_exits_2_naming_the_flag(capsys):
    assert main([*BASE, "--num_workers", "-1"]) == 2
    assert "--num_workers" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--training_data", "/d"])  # --job_name is required, as in ElasticDL
    assert exc.value.code == 2


def test_main_exits_2_on_unusable_training_data(tmp_path, capsys):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1'}}]\n"
                          "users: [{name: u, user: {}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
                          "current-context: c\n")
    code = main(["--job_name", "j", "--worker_image", "i", "--training_data", str(tmp_path / "missing"),
                 "--kubeconfig", str(kubeconfig), "--log_format", "json"])
    assert code == 2
    assert "--training_data cannot be used" in capsys.readouterr().err
