"""Debian sid packages unpacked into a private user cache, never into the system.

Strategy: Debian 12 ships no MySQL, but sid's ``mysql-server-core`` (MySQL 9.x) runs here when its whole
dependency closure is unpacked into one prefix and every binary is started through that prefix's own
dynamic loader (``SidPrefix.command``). apt runs with private state only (its own source list, lists, cache
and an empty dpkg status, all under the cache folder), so ``/etc/apt`` and the installed system are never
read for sources nor written. The closure is resolved at fetch time (sid moves; no versions are pinned), the
``.deb`` files are unpacked with ``dpkg -x``, and a stamp file marks a finished fetch so later calls cost
nothing. A lock file serialises concurrent fetches (parallel test sessions).

The cache folder is ``$BINLOG_MODEL_CACHE`` or ``~/.cache/binlog-model``; ``BINLOG_MODEL_SID_MIRROR`` picks
another Debian mirror. Every failure raises ``SidFetchError`` saying which step failed and why, so a test
fixture can skip with that reason.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from binlog_model.io.cache import cache_root
from binlog_model.testing.sqlserver import HarnessError

__all__ = ["SidBuild", "SidFetchError", "SidPrefix", "cache_root", "fetch_sid_packages",
           "report_server", "server_prefix",
           "sid_server_available"]

_DEFAULT_MIRROR = "http://deb.debian.org/debian"
# Only maintainer scripts and perl helpers need these; the binaries we run do not.
_SKIPPED_PREFIXES = ("perl", "libperl", "libgdbm", "libdb5.3", "debconf")
_APT_TIMEOUT = 600


class SidFetchError(HarnessError):
    """Debian sid packages could not be fetched or unpacked; the message names the step and the cause."""


class SidPrefix:
    """An unpacked sid package set: ``root`` holds ``usr/…``; binaries run through its own loader."""

    def __init__(self, root: Path, packages: Sequence[str]) -> None:
        self.root = root
        self.packages = tuple(packages)

    @property
    def libdir(self) -> Path:
        return self.root / "usr/lib/x86_64-linux-gnu"

    def command(self, binary: str | Path) -> list[str]:
        """The argv prefix that runs ``binary`` (a path inside the prefix) with sid's loader and libraries."""
        path = Path(binary)
        if not path.is_absolute():
            path = self.root / path
        return [str(self.libdir / "ld-linux-x86-64.so.2"), "--library-path", str(self.libdir), str(path)]

    def tool(self, name: str, product: str) -> list[str]:
        """The argv prefix that runs the client tool ``name`` of ``product`` (``mysqlbinlog``,
        ``mariadb-dump`` …) from this prefix; ``HarnessError`` when the prefix has no such tool."""
        path = self.root / "usr/bin" / name
        if not path.is_file():
            raise HarnessError(f"{name} is not in the sid {product} prefix {self.root}")
        return self.command(path)


class SidBuild:
    """A server whose binaries come from a sid prefix (a mixin, before the server class): the prefix,
    fetched on first use, its client tools and its server binary. Subclasses name ``product``,
    ``server_binary`` and ``dump_tool``, and ``_fetch_prefix``."""

    product = ""
    server_binary = ""      # inside the prefix, e.g. usr/sbin/mysqld
    dump_tool = ""
    _prefix: SidPrefix | None = None

    def _fetch_prefix(self) -> SidPrefix:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def prefix(self) -> SidPrefix:
        if self._prefix is None:
            self._prefix = self._fetch_prefix()
        return self._prefix

    def tool(self, name: str) -> list[str]:
        """The argv prefix of a client tool of the same build (``mysqlbinlog``, ``mariadb-dump`` …)."""
        return self.prefix.tool(name, self.product)

    def dump_command(self) -> list[str]:
        """The dump tool of the same build (run through the prefix's loader)."""
        return self.tool(self.dump_tool)

    def _server_command(self) -> list[str]:
        return self.prefix.command(self.server_binary)


def server_prefix(name: str, packages: Sequence[str], product: str, server: str) -> SidPrefix:
    """The unpacked sid packages of a server product (fetched on first use), checked to hold its server
    binary ``server``; ``SidFetchError`` says why not."""
    prefix = fetch_sid_packages(name, packages)
    if not (prefix.root / server).is_file():
        raise SidFetchError(f"sid {product} prefix {prefix.root} has no {server}")
    return prefix


def report_server(prefix: Callable[[], SidPrefix], product: str, server: str, tests: str) -> tuple[int, str]:
    """What a harness's ``python -m`` entry point reports: fetch ``product``'s prefix (once) and run its
    ``server`` with ``--version``. ``(0, version line)`` when it runs; ``(0, "")`` with a warning on stderr
    when sid cannot be reached (``tests`` then skip with the reason); ``(1, "")`` when the server does not
    run here."""
    import sys

    try:
        found = prefix()
    except HarnessError as err:
        print(f"warning: {tests} tests will skip: {err}", file=sys.stderr)
        return 0, ""
    version = subprocess.run([*found.command(server), "--version"], capture_output=True, text=True,
                             check=False)
    if version.returncode != 0:
        print(f"error: sid {Path(server).name} does not run here: {version.stderr.strip()}", file=sys.stderr)
        return 1, ""
    print(f"{product} ready: {version.stdout.strip()} ({len(found.packages)} sid packages in {found.root})")
    return 0, version.stdout


def sid_server_available(prefix: Callable[[], SidPrefix], product: str, server: str) -> tuple[bool, str]:
    """Can ``product``'s server (``server``, a path inside the prefix ``prefix()`` fetches) run here?
    ``(True, its path)`` or ``(False, reason)``."""
    try:
        found = prefix()
    except HarnessError as err:
        return False, f"{product} (Debian sid) unavailable: {err}"
    return True, str(found.root / server)


def _apt_options(state: Path) -> list[str]:
    return [
        "-o", f"Dir::Etc::SourceList={state / 'sid.list'}",
        "-o", "Dir::Etc::SourceParts=/dev/null",
        "-o", f"Dir::State::Lists={state / 'lists'}",
        "-o", f"Dir::Cache={state / 'apt-cache'}",
        "-o", f"Dir::State::status={state / 'empty-status'}",
        "-o", "Dir::Etc::Preferences=/dev/null",
        "-o", "Dir::Etc::PreferencesParts=/dev/null",
        "-o", "Debug::NoLocking=1",
        "-o", "APT::Sandbox::User=root",
        "-o", "Acquire::Retries=3",
    ]


def _run(step: str, cmd: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=_APT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise SidFetchError(f"sid fetch, {step}: {err}") from err
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise SidFetchError(f"sid fetch, {step}: exit {done.returncode}: {tail}")
    return done.stdout


def _closure(options: list[str], packages: Sequence[str], recurse: bool) -> list[str]:
    if not recurse:
        return list(packages)
    out = _run("resolve the dependency closure",
               ["apt-cache", *options, "depends", "--recurse", "--no-recommends", "--no-suggests",
                "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages])
    names = {line.strip() for line in out.splitlines() if line and not line.startswith((" ", "<"))}
    return sorted(name for name in names if not name.startswith(_SKIPPED_PREFIXES))


def fetch_sid_packages(name: str, packages: Sequence[str], *, recurse: bool = True) -> SidPrefix:
    """Fetch ``packages`` (with their dependency closure when ``recurse``) from sid into the cache, once.

    ``name`` names the prefix folder (``<cache>/<name>/root``). Returns the ready prefix; a second call
    returns at once. Raises ``SidFetchError`` when apt, the network or dpkg fails.
    """
    if shutil.which("apt-get") is None or shutil.which("dpkg") is None:
        raise SidFetchError("sid fetch needs apt-get and dpkg (a Debian or Ubuntu machine)")
    base = cache_root() / name
    root = base / "root"
    stamp = base / "fetched"
    if stamp.is_file():
        return SidPrefix(root, stamp.read_text().split())
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file():  # another process finished it while we waited
            return SidPrefix(root, stamp.read_text().split())
        began = time.monotonic()
        state = base / "apt"
        for folder in (state / "lists/partial", state / "apt-cache/archives/partial", base / "debs"):
            folder.mkdir(parents=True, exist_ok=True)
        mirror = os.environ.get("BINLOG_MODEL_SID_MIRROR", _DEFAULT_MIRROR)
        (state / "sid.list").write_text(f"deb {mirror} sid main\n")
        (state / "empty-status").touch()
        options = _apt_options(state)
        updated = _run("apt-get update", ["apt-get", *options, "-q", "update"])
        # apt-get update exits 0 when a mirror cannot be reached; an index that never arrived says so.
        if not any((state / "lists").glob("*_Packages*")):
            problems = [line for line in updated.splitlines() if line.startswith(("W:", "E:", "Err"))]
            raise SidFetchError(f"sid fetch, apt-get update: no package index from {mirror} "
                                f"({'; '.join(problems[-3:]) or 'no error given'})")
        wanted = _closure(options, packages, recurse)
        debs = base / "debs"
        for old in debs.glob("*.deb"):
            old.unlink()
        _run("download", ["apt-get", *options, "-q", "download", *wanted], cwd=debs)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for deb in sorted(debs.glob("*.deb")):
            _run(f"unpack {deb.name}", ["dpkg", "-x", str(deb), str(root)])
        shutil.rmtree(debs, ignore_errors=True)  # the unpacked tree is what we keep
        stamp.write_text(" ".join(wanted) + "\n")
        (base / "fetch-seconds").write_text(f"{time.monotonic() - began:.1f}\n")
        return SidPrefix(root, wanted)
