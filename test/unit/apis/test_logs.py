"""Library logging (``apis.logs``): silent by default, standard ``logging`` levels and handlers decide, key/value
fields kept; ``redact_secrets`` blanks credentials."""

from __future__ import annotations

import logging
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


def test_redaction_blanks_secret_keys_at_any_depth_and_leaves_the_rest():
    pod = {"metadata": {"name": "p", "annotations": {"sedna.io/credential": "s3-secret", "other": "kept"}}}
    out = redact_secrets(None, "info", {"event": "x", "authorization": "Bearer t0ken", "object": pod,
                                        "headers": [("X", "1"), {"Authorization": "Bearer t0ken"}], "count": 3})
    assert out["authorization"] == REDACTED
    assert out["object"]["metadata"]["annotations"] == {"sedna.io/credential": REDACTED, "other": "kept"}
    assert out["headers"][1] == {"Authorization": REDACTED} and out["count"] == 3
    assert pod["metadata"]["annotations"]["sedna.io/credential"] == "s3-secret"  # the caller's object is untouched
