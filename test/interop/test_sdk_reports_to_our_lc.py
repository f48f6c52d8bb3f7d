"""Reports that Sedna's real SDK sends (its own ``http_request``, run by its interpreter) and Go's LC accepts, posted to
our LC (in this process, under a GM written from the protocol): none may be lost.

* issue 25 item 1: a report for a job the node does not hold yet is kept and applied when the job arrives;
* issue 25 item 5: a report over 1 MiB (an eval with many metrics) and one with an empty ``ownerName`` are accepted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from testkit import FakeGM, wait_for
from testkit.learning import Conditions, LCUnderTest, il_job, send_il_objects

KIND = "IncrementalLearningJob"  # as the LC reports it (Go LC spelling)

pytestmark = pytest.mark.e2e

_SEND = """
import json, sys
sys.path.insert(0, sys.argv[1])
import tenacity
from sedna.service.client import http_request
url, message = sys.argv[2], json.load(sys.stdin)
try:
    answer = http_request.retry_with(stop=tenacity.stop_after_attempt(1))(url=url, method="POST", json=message)
    print(json.dumps({"accepted": True, "answer": answer}))
except tenacity.RetryError:
    print(json.dumps({"accepted": False}))
"""


def sdk_send(sdk: tuple[Path, str], lc_url: str, message: dict[str, Any]) -> dict[str, Any]:
    """What the SDK's ``LCClient.send`` gets from one try (it makes 5, 3 s apart: a refusal is a refusal each time)."""
    lib, python = sdk
    url = f"{lc_url}/sedna/workers/{message['name']}/info"
    done = subprocess.run([python, "-c", _SEND, str(lib), url], input=json.dumps(message), capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(kind: str, status: str, results: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    message = {"name": "worker-1", "namespace": "default", "ownerName": "il", "ownerKind": "incrementallearningjob",
               "kind": kind, "status": status, **fields}
    if results:
        message["results"] = results
    return message


@pytest.fixture
def lc(tmp_path: Path) -> Any:
    gm = FakeGM(features=["ack"], auto_ack=False)
    under_test = LCUnderTest(tmp_path, gm)
    yield under_test
    under_test.close()
    gm.close()


def until_train_running() -> Conditions:
    return (Conditions().add("Train", "Waiting")
            .add("Train", "Ready", {"models": [{"format": "pb", "url": "/models/initial.pb"}],
                                    "dataURL": "/output/il/data/train/1/data.txt", "outputDir": "/output/il/train/1"})
            .add("Train", "Starting").add("Train", "Running"))


def test_a_report_before_its_job_is_applied_when_the_job_arrives(sdk_python, lc) -> None:
    send_il_objects(lc)
    trained = [{"format": "pb", "url": "/output/il/train/1/model_finetune_tensorflow.pb", "metrics": None}]
    assert sdk_send(sdk_python, lc.url, report("train", "completed", trained))["accepted"]
    lc.send("insert", il_job(conditions=until_train_running().list))
    [content] = lc.wait_reports(KIND, 1)
    assert (content["phase"], content["status"]) == ("train", "completed")
    assert content["output"]["models"][0]["url"] == trained[0]["url"]


def test_a_large_eval_report_is_accepted(sdk_python, lc) -> None:
    send_il_objects(lc)
    conditions = until_train_running().add("Train", "Completed", output={"models": [
        {"format": "pb", "url": "/output/il/train/1/model.pb"}]}).add("Eval", "Waiting").add("Eval", "Ready", {
            "models": [{"format": "pb", "url": "/output/il/train/1/model.pb"},
                       {"format": "pb", "url": "/models/deploy.pb"}]}).add("Eval", "Starting").add("Eval", "Running")
    lc.send("insert", il_job(conditions=conditions.list))
    many = {f"class_{i}_precision": [0.123456789] * 40 for i in range(1500)}  # about 1.6 MiB of JSON
    results = [{"format": "pb", "url": "/output/il/train/1/model.pb", "metrics": many},
               {"format": "pb", "url": "/models/deploy.pb", "metrics": many}]
    big = report("eval", "completed", results)
    assert len(json.dumps(big)) > 1024 * 1024
    assert sdk_send(sdk_python, lc.url, big)["accepted"], "the SDK gave up on a large eval report"
    wait_for("the eval report relayed", lambda: lc.reports(KIND), check=bool)


def test_an_empty_owner_name_is_accepted(sdk_python, lc) -> None:
    # JOB_NAME set empty and no SERVICE_NAME: the SDK's JobBase reports ownerName ""
    assert sdk_send(sdk_python, lc.url, report("inference", "running", ownerName="",
                                               ownerKind="jointinferenceservice"))["accepted"]
