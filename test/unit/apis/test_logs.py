"""Library logging (``apis.logs``): silent by default, standard ``logging`` levels and handlers decide, key/value
fields kept; ``redact_secrets`` blanks credentials."""

from __future__ import annotations

import logging
import re
import subprocess
import sys

import pytest
from testkit import REPO

from apis.logs import REDACTED, LogEvent, get_logger, redact_secrets

# A reflector whose first list fails (a warning) and that starts and stops (debug lines), in a fresh interpreter so
# that nothing the test runner configured can change what is printed.
SCRIPT = """
import logging, sys, threading
if sys.argv[1] == "debug":
    logging.basicConfig(level=logging.DEBUG, format="%(levelname)s %(name)s %(message)s")
from apis.fake import FakeClientset
from informers import SharedInformerFactory, Store, Reflector, ListWatch, Backoff
from apis import errors

def failing_list(options):
    raise errors.InternalError("etcd is down")

stop = threading.Event()
broken = Reflector(ListWatch(failing_list, lambda o: None), Store(), name="broken")
try:
    broken.list_and_watch(stop)
except errors.InternalError:
    pass
factory = SharedInformerFactory(FakeClientset())
pods = factory.core_v1().pods()
factory.start(stop)
assert all(factory.wait_for_cache_sync(stop).values())
stop.set()
factory.shutdown()
print("done")
"""


def run_script(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", SCRIPT, mode], cwd=REPO, capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})


def test_library_is_silent_when_the_application_configures_no_logging():
    result = run_script("quiet")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "done\n"
    assert result.stderr == ""  # neither the debug lines nor the "failed to list" warning


def test_basic_config_at_debug_shows_library_lines_with_their_keys():
    result = run_script("debug")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert any(line.startswith("DEBUG informers.reflector starting reflector reflector=") for line in lines), lines
    failed = [line for line in lines if "failed to list" in line]
    assert failed and failed[0].startswith("WARNING informers.reflector failed to list reflector=broken"), lines
    assert "error='etcd is down'" in failed[0] and "error_type=InternalError" in failed[0]


def test_library_loggers_follow_the_standard_levels_and_handlers():
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger("informers.test_levels")
    handler = Keep()
    logger.addHandler(handler)
    try:
        logger.setLevel(logging.INFO)
        log = get_logger("informers.test_levels")
        log.debug("hidden", key="a")
        log.info("shown", key="ns/a", count=2)
        assert [r.getMessage() for r in records] == ["shown key=ns/a count=2"]
        assert isinstance(records[0].msg, LogEvent) and records[0].msg == {"event": "shown", "key": "ns/a", "count": 2}
        assert records[0].funcName == "test_library_loggers_follow_the_standard_levels_and_handlers"
        try:
            raise ValueError("boom")
        except ValueError:
            log.exception("failed", key="ns/b")
        assert records[-1].levelno == logging.ERROR and records[-1].exc_info[0] is ValueError
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)


def test_a_library_record_names_its_caller_also_for_a_logger_made_after_the_process_set_up():
    """``configure_process_logging`` makes structlog's logger class the default (``logging.setLoggerClass``), which
    skips structlog's frames itself: a library logger made after it (a module imported late) must not skip them
    twice, which named a caller far up the stack (pytest's ``_hookexec``)."""
    import io

    from apis.logs import configure_process_logging

    configure_process_logging("info", "json", io.StringIO())  # the test's process logging is restored afterwards
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger, handler = logging.getLogger("informers.test_made_after_the_set_up"), Keep()
    logger.addHandler(handler)
    try:
        get_logger("informers.test_made_after_the_set_up").warning("shown")
    finally:
        logger.removeHandler(handler)
    assert [r.funcName for r in records] == [
        "test_a_library_record_names_its_caller_also_for_a_logger_made_after_the_process_set_up"]


def test_an_announcement_comes_out_at_every_log_level():
    """What a program bound (port 0) must reach whoever started it, also at ``--log-level error``."""
    import io
    import json

    from apis.logs import announce_listening, configure_process_logging

    out = io.StringIO()
    configure_process_logging("error", "json", out)  # the test's process logging is restored afterwards
    get_logger("apis.httpserver").warning("not shown at error level")
    announce_listening("metrics", "http://127.0.0.1:1234")
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["event"], e["server"], e["url"]) for e in lines] == [("listening", "metrics", "http://127.0.0.1:1234")]


@pytest.mark.parametrize("text", [
    "request failed: headers={'Authorization': 'Bearer abc.def-ghi'}",
    'Authorization: Bearer abc.def-ghi',
    'GET /api with "authorization": "Basic dXNlcjpwYXNzd29yZA=="',
    "annotations {'sedna.io/credential': '{\"ACCESS_KEY_ID\": \"AKIA\", \"SECRET\": \"abc.def-ghi\"}'}",
    "{'metadata': {'annotations': {'sedna.io/credential': '{\"SECRET_ACCESS_KEY\": \"abc.def-ghi",  # a repr cut short
])
def test_redaction_blanks_credentials_inside_text(text):
    out = redact_secrets(None, "info", {"event": "x", "error": text})
    assert "abc.def-ghi" not in out["error"] and "dXNlcjpwYXNzd29yZA" not in out["error"] and REDACTED in out["error"]


@pytest.mark.parametrize("text", [
    # the websockets library's debug lines of an upgrade request, one header per line, with any scheme
    "< Authorization: Token abc.def-ghi",
    "< authorization: basic abc.def-ghi",
    "< Authorization: babc.def-ghi",
    "> authorization: Digest username=\"u\", response=\"abc.def-ghi\"",
    "< GET / HTTP/1.1\n< Proxy-Authorization: Custom abc.def-ghi\n< Host: x",
])
def test_redaction_blanks_a_whole_authorization_header_line_whatever_its_scheme(text):
    out = redact_secrets(None, "debug", {"event": text})
    assert "abc.def-ghi" not in out["event"] and REDACTED in out["event"], out["event"]
    assert out["event"].count("\n") == text.count("\n")  # only the header's own line


def test_redaction_blanks_secret_keys_at_any_depth_and_leaves_the_rest():
    pod = {"metadata": {"name": "p", "annotations": {"sedna.io/credential": "s3-secret", "other": "kept"}}}
    out = redact_secrets(None, "info", {"event": "x", "authorization": "Bearer t0ken", "object": pod,
                                        "headers": [("X", "1"), {"Authorization": "Bearer t0ken"}], "count": 3})
    assert out["authorization"] == REDACTED
    assert out["object"]["metadata"]["annotations"] == {"sedna.io/credential": REDACTED, "other": "kept"}
    assert out["headers"][1] == {"Authorization": REDACTED} and out["count"] == 3
    assert pod["metadata"]["annotations"]["sedna.io/credential"] == "s3-secret"  # the caller's object is untouched


@pytest.mark.parametrize("text", [
    # botocore's request dict (bytes values): the whole SigV4 value goes, not only its scheme
    "{'Authorization': b'AWS4-HMAC-SHA256 Credential=abc.def-ghi/20260101/us-east-1/s3/aws4_request, "
    "SignedHeaders=host, Signature=abc.def-ghi', 'X-Amz-Security-Token': b'abc.def-ghi'}",
    "x-amz-date:20260101T000000Z\nx-amz-security-token:abc.def-ghi\n",  # a canonical request
    "Signature:\nabc.def-ghi",
    "http://s3/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=abc.def-ghi%2F2026&X-Amz-Signature=abc.def-ghi",
    "http://s3/b/k?AWSAccessKeyId=abc.def-ghi&Signature=abc.def-ghi%3D&Expires=1",
    "env ACCESS_KEY_ID=abc.def-ghi SECRET_ACCESS_KEY=abc.def-ghi",
    "Session(aws_access_key_id='abc.def-ghi', aws_secret_access_key='abc.def-ghi', aws_session_token='abc.def-ghi')",
])
def test_redaction_blanks_s3_credentials_inside_text(text):
    out = redact_secrets(None, "debug", {"event": text})
    assert "abc.def-ghi" not in out["event"] and REDACTED in out["event"], out["event"]


def test_redaction_keeps_what_only_looks_like_a_secret_name():
    text = "signature_version=s3v4 SignedHeaders=host;x-amz-date credentials found in env tokens=3"
    assert redact_secrets(None, "debug", {"event": text})["event"] == text


# An S3 round of the LC's storage (upload, download, exists, a missing object), a client with a session token and a
# presigned URL, at debug level through the programs' logging set-up, in a fresh interpreter.
S3_ROUND = """
import json, logging, sys, tempfile
from pathlib import Path
import boto3, structlog
from apis.logs import configure_process_logging
configure_process_logging("debug", sys.argv[2], component="test")
from localcontroller.storage.s3 import S3Client, parse_credential
from localcontroller.storage import S3Location, StorageError
credential = json.loads(sys.argv[1])
client = S3Client(parse_credential(sys.argv[1]))
work = Path(tempfile.mkdtemp())
(work / "a.txt").write_text("hello")
location = S3Location(sys.argv[3], "a.txt")
client.upload(work / "a.txt", location)
client.download(location, work / "b.txt")
assert client.exists(location) and not client.exists(S3Location(sys.argv[3], "missing.txt"))
temporary = boto3.client("s3", endpoint_url="http://" + credential["s3-endpoint"], region_name="us-east-1",
                         aws_access_key_id="ASIATEMPORARYKEYID", aws_secret_access_key="temporary-secret-key",
                         aws_session_token="temporary-session-token")
temporary.list_objects_v2(Bucket=sys.argv[3])
url = temporary.generate_presigned_url("get_object", Params={"Bucket": sys.argv[3], "Key": "a.txt"})
logging.getLogger("urllib3.test").debug("fetching %s", url)
structlog.get_logger("test").debug("dataset credential", annotations={"sedna.io/credential": sys.argv[1]},
                                   env={"ACCESS_KEY_ID": credential["ACCESS_KEY_ID"]}, text=sys.argv[1])
print("done")
"""


@pytest.mark.parametrize("fmt", ["json", "console"])
def test_no_credential_reaches_the_log_of_an_s3_round_at_debug_level(s3_server, s3_bucket, fmt):
    from testkit.s3 import ACCESS_KEY_ID, SECRET_ACCESS_KEY

    result = subprocess.run([sys.executable, "-c", S3_ROUND, s3_server.credential_json(), fmt, s3_bucket], cwd=REPO,
                            capture_output=True, text=True, timeout=120,
                            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0 and result.stdout == "done\n", result.stderr[-3000:]
    log = result.stderr
    assert "Authorization" in log and "x-amz-security-token" in log.lower()  # botocore did log its requests
    for secret in (ACCESS_KEY_ID, SECRET_ACCESS_KEY, "ASIATEMPORARYKEYID", "temporary-secret-key",
                   "temporary-session-token"):
        assert secret not in log, [line for line in log.splitlines() if secret in line][:3]
    assert not re.search(r"Signature[=:]\s*[0-9A-Za-z%+/]{8,}", log), re.findall(r".{40}Signature.{40}", log)[:3]
