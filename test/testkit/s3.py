"""A real S3-compatible server for tests and local clusters: moto in server mode, in its own process.

    with S3Server(log_path=tmp / "s3.log") as s3:
        s3.client().create_bucket(Bucket="models")
        storage.set_credential(s3.credential_json())

Its own process keeps the server's memory and threads out of the measurements of the process under test.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import Any

from .procs import REPO, http_get
from .wait import wait_for

ACCESS_KEY_ID = "testing-access-key"
SECRET_ACCESS_KEY = "testing-secret-key"


# what moto's server (werkzeug) prints once it listens: the port it bound, also when asked for port 0
_RUNNING_ON = re.compile(r"Running on https?://[^\s:]+:(\d+)")


class S3Server:
    """``python -m moto.server`` on ``host:port`` (port 0: a free one, read from the server's own announcement);
    ``start()`` returns once it answers, ``stop()`` ends it. Its output goes to ``log_path`` (a temporary file when
    not given). Any access key is accepted; ``credential_json()`` is a ``sedna.io/credential`` value."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, log_path: Path | None = None) -> None:
        self.host = host
        self.port = port
        self.log_path = log_path or Path(tempfile.mkdtemp(prefix="s3-")) / "s3.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def endpoint(self) -> str:
        """``host:port``, the form the credential's ``s3-endpoint`` takes."""
        return f"{self.host}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.endpoint}"

    def start(self, timeout: float = 60.0) -> S3Server:
        with open(self.log_path, "ab") as log:
            start = log.tell()
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", self.host, "-p", str(self.port)],
                cwd=REPO, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        if not self.port:
            self.port = int(wait_for("the S3 server's address", lambda: self._announced(start), timeout=timeout,
                                     interval=0.1))
        wait_for(f"the S3 server on {self.endpoint}", self._answers, timeout=timeout, interval=0.1)
        return self

    def _announced(self, start: int) -> str:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"the S3 server exited with {self.proc.returncode}; see {self.log_path}")
        with open(self.log_path, "rb") as log:
            log.seek(start)
            found = _RUNNING_ON.search(log.read().decode(errors="replace"))
        return found.group(1) if found else ""

    def _answers(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(f"the S3 server exited with {self.proc.returncode}; see {self.log_path}")
        return http_get(f"{self.url}/moto-api/data.json", timeout=2.0)[0] == 200

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def reset(self) -> None:
        """Forget every bucket and object."""
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/moto-api/reset", method="POST"), timeout=10).close()

    def credential(self, **overrides: str) -> dict[str, str]:
        """The ``sedna.io/credential`` keys for this server (plain HTTP), with ``overrides`` applied."""
        return {"s3-endpoint": self.endpoint, "s3-usehttps": "0", "ACCESS_KEY_ID": ACCESS_KEY_ID,
                "SECRET_ACCESS_KEY": SECRET_ACCESS_KEY, **overrides}

    def credential_json(self, **overrides: str) -> str:
        return json.dumps(self.credential(**overrides))

    def client(self) -> Any:
        """An independent boto3 S3 client for this server (to set up and check objects in tests)."""
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.url, region_name="us-east-1", aws_access_key_id=ACCESS_KEY_ID,
                            aws_secret_access_key=SECRET_ACCESS_KEY,
                            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
