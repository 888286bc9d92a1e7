"""A real S3-compatible server on 127.0.0.1 for tests and benchmarks: moto's standalone server, in a child
process, with a count of the object bytes it served.

Strategy: the child runs moto's WSGI application (``moto[server]``, the same one as ``moto_server``) behind a
small middleware that adds up the body bytes of every GET of an object and remembers each request's
``Range`` header, so a test can check that a Spark slice fetched its own byte range and nothing more.
``GET /_served`` answers the counts as JSON and ``DELETE /_served`` resets them; everything else is S3.
``env()`` gives the standard ``AWS_*`` variables that point a client (pyarrow, boto3, a Spark executor
started with that environment) at the server with throwaway credentials; instance metadata lookups are
switched off so no client ever tries a non-loopback address. Stopped by pid.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["S3Server"]

_ACCESS_KEY = "binlog-model-test"
_SECRET_KEY = "binlog-model-test-secret"
_REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class S3Server:
    """``with S3Server() as s3: s3.upload(files, "bucket/prefix")``; ``s3.served()`` after reads."""

    def __init__(self, *, port: int | None = None, log_dir: str | os.PathLike[str] | None = None) -> None:
        self.port = port or _free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._log_dir = Path(log_dir) if log_dir else Path(tempfile.mkdtemp(prefix="binlog-model-s3-"))
        self._proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """The standard AWS client configuration for this server (no real credentials)."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ENDPOINT_URL_S3": self.endpoint,
                "AWS_ACCESS_KEY_ID": _ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": _SECRET_KEY,
                "AWS_DEFAULT_REGION": _REGION, "AWS_REGION": _REGION, "AWS_EC2_METADATA_DISABLED": "true"}

    def start(self, timeout: float = 60.0) -> S3Server:
        log = open(self._log_dir / "s3server.log", "ab")  # noqa: SIM115 - the child keeps it
        self._proc = subprocess.Popen([sys.executable, "-m", "binlog_model.testing.s3server",
                                       "--port", str(self.port)], stdout=log, stderr=subprocess.STDOUT,
                                      env={**os.environ, **self.env()})
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.served()
                return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    text = (self._log_dir / "s3server.log").read_text(errors="replace")[-2000:]
                    raise RuntimeError(f"the S3 server did not start on {self.endpoint}:\n{text}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)

    def __enter__(self) -> S3Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def filesystem(self) -> Any:
        """A pyarrow ``S3FileSystem`` on this server that may create buckets (for uploads)."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(access_key=_ACCESS_KEY, secret_key=_SECRET_KEY, region=_REGION,
                                 endpoint_override=self.endpoint, scheme="http", allow_bucket_creation=True)

    def upload(self, files: Iterable[str | os.PathLike[str]], prefix: str) -> list[str]:
        """Copy local ``files`` to ``s3://PREFIX/<name>`` (the bucket is created); their URIs."""
        fs = self.filesystem()
        bucket = prefix.split("/", 1)[0]
        fs.create_dir(bucket)
        uris = []
        for path in files:
            key = f"{prefix.rstrip('/')}/{Path(path).name}"
            with open(path, "rb") as src, fs.open_output_stream(key) as dst:
                while chunk := src.read(8 << 20):
                    dst.write(chunk)
            uris.append(f"s3://{key}")
        return uris

    def served(self) -> dict[str, Any]:
        """``{"bytes": object body bytes served, "requests": [[method, path, range or null, bytes], ...]}``
        since the start or the last ``reset()``."""
        with urllib.request.urlopen(f"{self.endpoint}/_served", timeout=10) as answer:
            return json.loads(answer.read())

    def reset(self) -> None:
        request = urllib.request.Request(f"{self.endpoint}/_served", method="DELETE")
        with urllib.request.urlopen(request, timeout=10):
            pass


class _Counting:
    """WSGI middleware: counts the body bytes of object GETs; serves ``/_served``."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.total = 0
        self.requests: list[list[Any]] = []

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        if environ.get("PATH_INFO") == "/_served":
            if environ["REQUEST_METHOD"] == "DELETE":
                with self.lock:
                    self.total = 0
                    self.requests = []
            with self.lock:
                body = json.dumps({"bytes": self.total, "requests": self.requests}).encode()
            start_response("200 OK", [("Content-Type", "application/json"),
                                       ("Content-Length", str(len(body)))])
            return iter([body])
        if environ["REQUEST_METHOD"] != "GET" or environ.get("QUERY_STRING"):
            return self.app(environ, start_response)
        return self._counted(environ, start_response)

    def _counted(self, environ: dict[str, Any], start_response: Any) -> Iterator[bytes]:
        size = 0
        result = self.app(environ, start_response)
        try:
            for chunk in result:
                size += len(chunk)
                yield chunk
        finally:
            if hasattr(result, "close"):
                result.close()
            with self.lock:
                self.total += size
                self.requests.append(["GET", environ.get("PATH_INFO"), environ.get("HTTP_RANGE"), size])


def _serve(port: int) -> None:
    import logging

    from moto.server import DomainDispatcherApplication, create_backend_app
    from werkzeug.serving import make_server

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = _Counting(DomainDispatcherApplication(create_backend_app))
    make_server("127.0.0.1", port, app, threaded=True).serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="moto's S3 server on 127.0.0.1 with a served-bytes count")
    parser.add_argument("--port", type=int, required=True)
    _serve(parser.parse_args().port)
