"""The learning managers across LC restarts (same SQLite database: no report lost, none made twice, a decision taken
before a crash finished the same way) and with S3 (``testkit.s3.S3Server``): datasets read, data files and index
uploaded, models copied, credentials from the ``sedna.io/credential`` annotations and never logged."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator

import pytest
import structlog.testing
from testkit import FakeGM, wait_for
from testkit.learning import Conditions, LCUnderTest, dataset, deploy_stage, il_job, model
from testkit.learning import grow_dataset as grow
from testkit.learning import reported_model as m
from testkit.learning import sample_lines as lines
from testkit.learning import send_il_objects as setup_objects
from testkit.s3 import SECRET_ACCESS_KEY, S3Server

from localcontroller.managers.learning import current_stage
from localcontroller.store import Store
from workqueue.clock import FakeClock

KIND = "IncrementalLearningJob"
DEPLOY_TRIGGER = {"condition": {"operator": "gt", "threshold": 0.1, "metric": "precision_delta[0]"}}
job = functools.partial(il_job, deploy_trigger=DEPLOY_TRIGGER)

CREDENTIAL = "sedna.io/credential"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def il_frames(gm: FakeGM) -> list[tuple[str, dict]]:
    """``(id, content)`` of the job reports the GM has received so far."""
    frames = []
    while not gm.frames.empty():
        _, header, content = gm.frames.get()
        if header.get("resourceKind") == KIND:
            frames.append((header.get("id", ""), content))
    return frames


def test_a_restart_mid_round_resends_the_unacked_report_once_and_resumes_the_round(tmp_path, clock):
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    first = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        setup_objects(first)
        conds = Conditions().add("Train", "Waiting")
        first.send("insert", job(conditions=conds.list))
        train = first.wait_reports(KIND, 1)[0]
        sent = wait_for("the report on the wire", lambda: il_frames(gm))
    finally:
        assert first.close() == 0
    second = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        resent = wait_for("the unacked report resent", lambda: il_frames(gm))
        assert resent == sent and resent[0][1] == train  # the same id and content: the GM applies it once
        wait_for("the job resumed", lambda: second.il.record("default", "il"))
        second.il.sync("default/il")
        assert second.wait_reports(KIND, 1) == [train] and len(second.reports(KIND)) == 1
        conds.add("Train", "Ready", train["input"]).add("Train", "Completed", output={"models": [
            {"format": "pb", "url": "/output/il/train/1/model.pb"}]}).add("Eval", "Waiting")
        second.send("insert", job(conditions=conds.list))
        evaluation = second.wait_reports(KIND, 2)[1]
        assert evaluation["input"]["dataURL"] == "/output/il/data/eval/1/data.txt"  # round 1, from SQLite
        assert second.path("/output/il/data/eval/1/data.txt").read_text().splitlines() == lines(8, 10)
    finally:
        second.close()
        gm.close()


def test_a_report_made_while_the_gm_is_unreachable_reaches_it_once_after_restarts(tmp_path, clock):
    trigger = {"condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    first = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        setup_objects(first)
        first.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, train_prob=1.0,
                                 train_trigger=trigger))
        wait_for("the first evaluation", lambda: first.il.record("default", "il"),
                 check=lambda r: r is not None and r.train_checked is not None)
        assert first.reports(KIND) == []
    finally:
        first.close()
        gm.close()
    grow(first, 10, 12)  # new samples while the LC is down
    refusing = FakeGM(status=503)
    offline = LCUnderTest(tmp_path, refusing, clock=clock)  # resumes the job from SQLite, without the GM
    try:
        train = offline.wait_reports(KIND, 1)[0]
        assert train["input"]["dataURL"] == "/output/il/data/train/1/data.txt"
    finally:
        offline.close()
        refusing.close()
    back = FakeGM(features=["ack", "resync"], auto_ack=False)
    third = LCUnderTest(tmp_path, back, clock=clock)
    try:
        frames = wait_for("the report", lambda: il_frames(back))
        assert [content for _, content in frames] == [train]
        third.il.sync("default/il")
        assert third.reports(KIND) == [(KIND, "il", train)]
    finally:
        third.close()
        back.close()


def test_a_deploy_decision_taken_before_a_crash_is_finished_the_same_way(tmp_path, clock):
    """The decision is stored before the copy; after a restart the (timer) trigger would no longer fire."""
    out_of_window = {"timer": {"start": "20:00", "end": "21:00"}, **DEPLOY_TRIGGER}
    stale = il_job(conditions=deploy_stage(Conditions(), new=0.9, old=0.7).list, deploy_trigger=out_of_window)
    current = current_stage(stale)
    store = Store(str(tmp_path / "lc.db"))
    store.put_state("incrementallearningjob/default/il/round", {
        "uid": "uid-il", "round": 1, "pending": {"deploy": {"instance": current.instance, "fire": True}}})
    store.close()
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    lc = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        setup_objects(lc)
        lc.path("/output/il/train/1").mkdir(parents=True)
        lc.path("/output/il/train/1/model.pb").write_bytes(b"decided before the crash")
        lc.send("insert", stale)
        assert lc.wait_reports(KIND, 1)[0]["status"] == "Ready"
        assert lc.path("/models/deploy.pb").read_bytes() == b"decided before the crash"
        assert lc.il.record("default", "il").state.pending == {}
    finally:
        lc.close()
        gm.close()


def test_the_report_and_the_state_recording_it_are_one_transaction(tmp_path):
    store = Store(str(tmp_path / "lc.db"))
    try:
        seq = store.add_report("default", KIND, "il", b"{}", state=("k", {"round": 1}))
        assert store.get_state("k") == {"round": 1} and [e.seq for e in store.iter_reports()] == [seq]
        with pytest.raises(Exception, match="NOT NULL"):
            store.add_report("default", KIND, "il", None, state=("k", {"round": 2}))  # type: ignore[arg-type]
        assert store.get_state("k") == {"round": 1} and store.pending_reports() == 1
    finally:
        store.close()


# -- S3 ---------------------------------------------------------------------------------------------------------------
@pytest.fixture
def s3(s3_server: S3Server, s3_bucket: str) -> Iterator[tuple[S3Server, str]]:
    yield s3_server, s3_bucket


def test_s3_dataset_output_and_models_with_credentials_from_the_annotations(tmp_path, clock, s3):
    server, bucket = s3
    client = server.client()
    client.put_object(Bucket=bucket, Key="data/ds.txt", Body="".join(f"{x}\n" for x in lines(0, 10)).encode())
    credential = {CREDENTIAL: server.credential_json()}
    other_credential = {CREDENTIAL: server.credential_json(ACCESS_KEY_ID="another-key")}  # another Storage
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    lc = LCUnderTest(tmp_path, gm, clock=clock)
    s3_job = {"output_dir": f"s3://{bucket}/il/", "annotations": credential}
    try:
        with structlog.testing.capture_logs() as logs:
            lc.send("insert", dataset(url=f"s3://{bucket}/data/ds.txt", annotations=credential))
            lc.send("insert", model("initial", f"s3://{bucket}/models/initial.pb", annotations=credential))
            lc.send("insert", model("deploy", f"s3://{bucket}/models/deploy.pb", annotations=other_credential))
            assert lc.wait_reports("Dataset", 1) == [{"numberOfSamples": 10}]
            lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, **s3_job))
            train = lc.wait_reports(KIND, 1)[0]
            assert train == {"phase": "Train", "status": "Ready", "output": None, "input": {
                "models": [m(f"s3://{bucket}/models/initial.pb")],
                "dataURL": f"s3://{bucket}/il/data/train/1/data.txt",
                "dataIndexURL": f"s3://{bucket}/il/data/train/1/dataIndex.txt",
                "outputDir": f"s3://{bucket}/il/train/1"}}

            def text(key: str) -> list[str]:
                return client.get_object(Bucket=bucket, Key=key)["Body"].read().decode().splitlines()

            assert text("il/data/train/1/data.txt") == lines(0, 8)
            assert text("il/data/train/1/dataIndex.txt") == [f"s3://{bucket}/data/", *[
                f"images/{i}.jpg" for i in range(8)]]

            client.put_object(Bucket=bucket, Key="il/train/1/model.pb", Body=b"trained in S3")
            lc.send("insert", job(conditions=deploy_stage(Conditions(), 0.9, 0.7, f"s3://{bucket}/il/train/1/model.pb")
                                  .list, **s3_job))
            assert lc.wait_reports(KIND, 2)[1]["status"] == "Ready"
            assert client.get_object(Bucket=bucket, Key="models/deploy.pb")["Body"].read() == b"trained in S3"
        assert SECRET_ACCESS_KEY not in json.dumps(logs, default=str)
        assert not any(CREDENTIAL in json.dumps(e, default=str) for e in logs)
    finally:
        lc.close()
        gm.close()


def test_a_local_output_with_an_s3_dataset_gets_a_data_index(tmp_path, clock, s3):
    server, bucket = s3
    server.client().put_object(Bucket=bucket, Key="d/ds.txt", Body=b"a/1.png x\nb/2.png y\nnoext\n")
    credential = {CREDENTIAL: server.credential_json()}
    gm = FakeGM(features=["ack", "resync"], auto_ack=False)
    lc = LCUnderTest(tmp_path, gm, clock=clock)
    try:
        lc.send("insert", dataset(url=f"s3://{bucket}/d/ds.txt", annotations=credential))
        lc.send("insert", model("initial", "/models/initial.pb"))
        trigger = {"condition": {"operator": ">=", "threshold": 3, "metric": "num_of_samples"}}
        lc.send("insert", job(conditions=Conditions().add("Train", "Waiting").list, train_prob=1.0,
                              train_trigger=trigger))
        train = lc.wait_reports(KIND, 1)[0]
        assert train["input"]["dataIndexURL"] == "/output/il/data/train/1/dataIndex.txt"
        assert lc.path("/output/il/data/train/1/data.txt").read_text() == "a/1.png x\nb/2.png y\nnoext\n"
        assert lc.path("/output/il/data/train/1/dataIndex.txt").read_text() == \
            f"s3://{bucket}/d/\na/1.png\nb/2.png\n"
    finally:
        lc.close()
        gm.close()


def test_copy_between_storages_in_every_direction(tmp_path, s3):
    from localcontroller.storage import StoragePool, copy_between

    server, bucket = s3
    (tmp_path / "m").mkdir()
    (tmp_path / "m/a.pb").write_bytes(b"A")
    pool = StoragePool(str(tmp_path))
    host, mine = pool.get(None), pool.get(server.credential_json())
    theirs = pool.for_object({"metadata": {"annotations": {CREDENTIAL: server.credential_json(ACCESS_KEY_ID="x")}}})
    assert pool.get(server.credential_json()) is mine and theirs is not mine
    copy_between(host, "/m/a.pb", mine, f"s3://{bucket}/a.pb")  # host → S3
    copy_between(mine, f"s3://{bucket}/a.pb", theirs, f"s3://{bucket}/b.pb")  # S3 → S3, another credential
    copy_between(theirs, f"s3://{bucket}/b.pb", host, "/m/b.pb")  # S3 → host
    copy_between(mine, f"s3://{bucket}/b.pb", mine, f"s3://{bucket}/c.pb")  # one storage: server-side
    assert (tmp_path / "m/b.pb").read_bytes() == b"A"
    assert server.client().get_object(Bucket=bucket, Key="c.pb")["Body"].read() == b"A"
    with pytest.raises(ValueError, match="s3-endpoint"):
        pool.get('{"ACCESS_KEY_ID": "a", "SECRET_ACCESS_KEY": "b"}')
