"""The pinned Debian sid builds (binlog_model.testing.sid_pins) and how a fetch treats them: the table is one
exact build per package, a download is checked against its SHA-256 (a difference names the package), a pin
sid no longer has names the refresh command, and a missing server kind fails in CI but skips locally.

The fetches here run against a real HTTP server on loopback standing in for the mirror, with a real ``.deb``
built by ``dpkg-deb``, into a temporary cache.
"""

from __future__ import annotations

import hashlib
import http.server
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from binlog_model.testing import availability, sid_pins
from binlog_model.testing.availability import ServerRequiredError, missing_servers, server_availability
from binlog_model.testing.sid import (
    REFRESH_COMMAND,
    SidFetchError,
    SidPrefix,
    fetch_sid_packages,
    pinned_root,
    pins_module,
    pins_of,
    report_server,
)

POOL_PATH = "pool/main/b/bm-pin-probe/bm-pin-probe_1.0-1_all.deb"


def test_every_wanted_set_is_pinned_to_exact_builds() -> None:
    assert set(sid_pins.PINS) == set(sid_pins.WANTED)
    for name, (roots, _) in sid_pins.WANTED.items():
        pins = pins_of(name)
        packages = [p.package for p in pins]
        assert len(packages) == len(set(packages)), f"{name}: a package pinned twice"
        assert set(roots) <= set(packages), f"{name}: a root package is not pinned"
        for pin in pins:
            assert re.fullmatch(r"[0-9a-f]{64}", pin.sha256) and pin.size > 0, pin
            # the pool file is that package at that version (an epoch is not part of the file name)
            upstream = pin.version.split(":", 1)[-1]
            assert pin.path.startswith("pool/main/") and Path(pin.path).name.startswith(
                f"{pin.package}_{upstream}_"), pin
    server = {p.package: p.version for p in pins_of("mysql-sid") + pins_of("mariadb11-sid")}
    assert server["mysql-server-core"].startswith("9.")
    assert server["mariadb-server-core"].split(":")[-1].startswith("11.8.")


def test_the_refresh_writes_the_table_it_reads() -> None:
    text = pins_module({name: list(pins_of(name)) for name in sid_pins.PINS}, "http://mirror.example/debian")
    namespace: dict[str, object] = {}
    exec(compile(text, "sid_pins.py", "exec"), namespace)
    assert namespace["PINS"] == sid_pins.PINS and namespace["WANTED"] == sid_pins.WANTED


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A Debian-like mirror on loopback serving ``<folder>/pool/...``; the cache in a temporary folder."""
    folder = tmp_path / "mirror"
    folder.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)  # type: ignore[arg-type]

        def log_message(self, *_: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("BINLOG_MODEL_SID_MIRROR", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv("BINLOG_MODEL_CACHE", str(tmp_path / "cache"))
    try:
        yield folder
    finally:
        server.shutdown()
        server.server_close()


def _build_deb(tmp_path: Path, target: Path) -> bytes:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not installed (a Debian or Ubuntu machine)")
    tree = tmp_path / "deb-tree"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        "Package: bm-pin-probe\nVersion: 1.0-1\nArchitecture: all\n"
        "Maintainer: tests <tests@example.invalid>\nDescription: probe\n")
    (tree / "usr/share/bm-pin-probe").mkdir(parents=True)
    (tree / "usr/share/bm-pin-probe/hello").write_text("pinned\n")
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(target)], check=True,
                   capture_output=True)
    return target.read_bytes()


def _pin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setitem(sid_pins.PINS, "probe",
                        (("bm-pin-probe", "1.0-1", POOL_PATH, hashlib.sha256(data).hexdigest(), len(data)),))


def test_a_pinned_deb_is_fetched_checked_and_unpacked_once(mirror: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    data = _build_deb(tmp_path, mirror / POOL_PATH)
    _pin(monkeypatch, data)
    prefix = fetch_sid_packages("probe")
    assert prefix.root == pinned_root("probe") and prefix.packages == ("bm-pin-probe",)
    assert (prefix.root / "usr/share/bm-pin-probe/hello").read_text() == "pinned\n"
    (mirror / POOL_PATH).unlink()                      # a second fetch reads the stamp, not the mirror
    assert fetch_sid_packages("probe").root == prefix.root


def test_a_download_that_differs_from_its_pin_is_an_error_naming_the_package(
        mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _build_deb(tmp_path, mirror / POOL_PATH)
    _pin(monkeypatch, data + b"the pinned build had one more byte")
    served = rf"{hashlib.sha256(data).hexdigest()} \({len(data)} bytes\)"
    with pytest.raises(SidFetchError, match=r"^sid package bm-pin-probe 1\.0-1: http://\S+ has SHA-256 "
                                            rf"{served}, not the pinned [0-9a-f]{{64}}"):
        fetch_sid_packages("probe")
    assert not (pinned_root("probe").parent / "fetched").exists()


def test_a_pin_sid_no_longer_has_names_the_package_and_the_refresh(mirror: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _pin(monkeypatch, _build_deb(tmp_path, tmp_path / "elsewhere.deb"))    # not on the mirror: HTTP 404
    with pytest.raises(SidFetchError) as caught:
        fetch_sid_packages("probe")
    message = str(caught.value)
    assert message.startswith("sid package bm-pin-probe 1.0-1 is gone from http://127.0.0.1:"), message
    assert f"`{REFRESH_COMMAND}`" in message and "\n" not in message


def _unfetchable() -> SidPrefix:
    raise SidFetchError("sid package bm-pin-probe 0.0-bogus is gone from the mirror")


def test_a_missing_server_kind_skips_locally_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("CI", "BINLOG_MODEL_REQUIRE_SERVERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(availability, "_missing", {})   # the probe kind stays out of the run's summary
    probe_calls = []

    def probe() -> tuple[bool, str]:
        probe_calls.append(1)
        return False, "no such server\n(second line)"

    kind = "Probe server (test_sid_pins)"
    assert server_availability(kind, probe) == (False, "no such server (second line)")
    assert missing_servers()[kind] == "no such server (second line)"
    assert report_server(_unfetchable, "Probe", "usr/sbin/probed", kind) == (0, "")
    assert "warning: Probe server (test_sid_pins) tests will skip" in capsys.readouterr().err

    monkeypatch.setenv("CI", "true")
    with pytest.raises(ServerRequiredError, match=r"^Probe server \(test_sid_pins\) is required in this "
                                                  r"run \(BINLOG_MODEL_REQUIRE_SERVERS or CI is set\) but "
                                                  r"cannot be had: no such server \(second line\)$"):
        server_availability(kind, probe)
    assert probe_calls == [1], "a miss is remembered, not probed again"
    assert report_server(_unfetchable, "Probe", "usr/sbin/probed", kind) == (1, "")
    assert capsys.readouterr().err.startswith("error: Probe server (test_sid_pins) is required in this run")
    monkeypatch.setenv("CI", "false")
    monkeypatch.setenv("BINLOG_MODEL_REQUIRE_SERVERS", "1")
    with pytest.raises(ServerRequiredError):
        server_availability(kind, probe)
