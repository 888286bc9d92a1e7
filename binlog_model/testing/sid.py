"""Debian sid packages, pinned to exact builds, unpacked into a private user cache, never into the system.

Strategy: Debian 12 ships no MySQL, but sid's ``mysql-server-core`` (MySQL 9.x) runs here when its whole
dependency closure is unpacked into one prefix and every binary is started through that prefix's own
dynamic loader (``SidPrefix.command``). What each prefix holds is pinned in ``sid_pins`` (the one table of
package, version, pool path and SHA-256): a fetch downloads exactly those ``.deb`` files from the mirror's
pool, checks each one's SHA-256 (a difference is an error naming the package), and unpacks them with
``dpkg -x`` into ``<cache>/<name>@<digest of the pins>/root``, so new pins get a new folder and a stamp
file marks a finished fetch (later calls cost nothing). A lock file serialises concurrent fetches.

sid moves on and its pool keeps only current builds: a pinned ``.deb`` that is gone is an error naming the
package and the command that refreshes the pins on purpose, ``python -m binlog_model.testing.sid
--refresh-pins``, which resolves the closure against sid's index today (apt-get with private state only:
its own source list, lists and cache, an empty dpkg status; ``/etc/apt`` is never read nor written) and
prints the new ``sid_pins.py``.

The cache folder is ``$BINLOG_MODEL_CACHE`` or ``~/.cache/binlog-model``; ``BINLOG_MODEL_SID_MIRROR`` picks
another Debian mirror. Every failure raises ``SidFetchError`` saying which step failed and why.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from binlog_model.io.cache import cache_root
from binlog_model.testing import sid_pins
from binlog_model.testing.availability import server_availability, servers_required
from binlog_model.testing.sqlserver import HarnessError

__all__ = ["REFRESH_COMMAND", "SidBuild", "SidFetchError", "SidPin", "SidPrefix", "cache_root",
           "fetch_sid_packages", "pinned_root", "pins_module", "pins_of", "refresh_pins", "report_server",
           "server_prefix", "sid_server_available"]

_DEFAULT_MIRROR = "http://deb.debian.org/debian"
#: how the pins are renewed on purpose (named by every error about a pin)
REFRESH_COMMAND = "python -m binlog_model.testing.sid --refresh-pins --write"
# Only maintainer scripts and perl helpers need these; the binaries we run do not.
_SKIPPED_PREFIXES = ("perl", "libperl", "libgdbm", "libdb5.3", "debconf")
_APT_TIMEOUT = 600
_DOWNLOAD_TIMEOUT = 120
_DOWNLOADS_AT_ONCE = 4


class SidPin(NamedTuple):
    """One exact ``.deb``: the package, its version, its path in the mirror's pool, its SHA-256 and size."""

    package: str
    version: str
    path: str
    sha256: str
    size: int


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


def pins_of(name: str) -> tuple[SidPin, ...]:
    """The pinned ``.deb`` files of the package set ``name`` (a key of ``sid_pins.PINS``)."""
    try:
        return tuple(SidPin(*pin) for pin in sid_pins.PINS[name])
    except KeyError:
        raise SidFetchError(f"no sid pins for {name!r} (known: {', '.join(sorted(sid_pins.PINS))})") from None


def pinned_root(name: str) -> Path:
    """Where the pinned set ``name`` is (or will be) unpacked: ``<cache>/<name>@<its pins' digest>/root``."""
    text = "\n".join(f"{p.package} {p.version} {p.sha256}" for p in pins_of(name))
    return cache_root() / f"{name}@{hashlib.sha256(text.encode()).hexdigest()[:12]}" / "root"


def server_prefix(name: str, product: str, server: str) -> SidPrefix:
    """The unpacked pinned sid packages of a server product (fetched on first use), checked to hold its
    server binary ``server``; ``SidFetchError`` says why not."""
    prefix = fetch_sid_packages(name)
    if not (prefix.root / server).is_file():
        raise SidFetchError(f"sid {product} prefix {prefix.root} has no {server}")
    return prefix


def report_server(prefix: Callable[[], SidPrefix], product: str, server: str, tests: str) -> tuple[int, str]:
    """What a harness's ``python -m`` entry point reports: fetch ``product``'s prefix (once) and run its
    ``server`` with ``--version``. ``(0, version line)`` when it runs; ``(1, "")`` when the server does not
    run here, or cannot be fetched where servers are required (CI). Elsewhere a failed fetch is ``(0, "")``
    with a warning on stderr (``tests`` then skip with the reason)."""
    import sys

    try:
        found = prefix()
    except HarnessError as err:
        if servers_required():
            print(f"error: {tests} is required in this run (CI) but cannot be had: {err}", file=sys.stderr)
            return 1, ""
        print(f"warning: {tests} tests will skip: {err}", file=sys.stderr)
        return 0, ""
    version = subprocess.run([*found.command(server), "--version"], capture_output=True, text=True,
                             check=False)
    if version.returncode != 0:
        print(f"error: sid {Path(server).name} does not run here: {version.stderr.strip()}", file=sys.stderr)
        return 1, ""
    print(f"{product} ready: {version.stdout.strip()} ({len(found.packages)} sid packages in {found.root})")
    return 0, version.stdout


def sid_server_available(prefix: Callable[[], SidPrefix], kind: str, server: str) -> tuple[bool, str]:
    """Can the server kind ``kind`` (``server``, a path inside the prefix ``prefix()`` fetches) run here?
    ``(True, its path)`` or ``(False, reason)``; where servers are required (CI), ``ServerRequiredError``
    instead of False (``availability.server_availability``)."""
    def probe() -> tuple[bool, str]:
        try:
            found = prefix()
        except HarnessError as err:
            return False, f"{kind} (Debian sid) unavailable: {err}"
        return True, str(found.root / server)

    return server_availability(kind, probe)


# --- fetching the pinned files ------------------------------------------------------------------------------


def fetch_sid_packages(name: str) -> SidPrefix:
    """Fetch the pinned package set ``name`` into the cache, once, and return the ready prefix.

    Every ``.deb`` is downloaded from the mirror's pool by its pinned path and must have its pinned SHA-256;
    a second call returns at once. Raises ``SidFetchError`` naming the package when a file is gone, differs
    or cannot be unpacked, and naming the step when the network or dpkg fails.
    """
    if shutil.which("dpkg") is None:
        raise SidFetchError("sid fetch needs dpkg (a Debian or Ubuntu machine)")
    pins = pins_of(name)
    root = pinned_root(name)
    base = root.parent
    stamp = base / "fetched"
    if stamp.is_file():
        return SidPrefix(root, stamp.read_text().split())
    base.mkdir(parents=True, exist_ok=True)
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file():  # another process finished it while we waited
            return SidPrefix(root, stamp.read_text().split())
        began = time.monotonic()
        mirror = os.environ.get("BINLOG_MODEL_SID_MIRROR", _DEFAULT_MIRROR).rstrip("/")
        debs = base / "debs"
        shutil.rmtree(debs, ignore_errors=True)
        debs.mkdir()
        with ThreadPoolExecutor(_DOWNLOADS_AT_ONCE) as pool:
            files = list(pool.map(lambda pin: _download(mirror, pin, debs), pins))
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        for pin, deb in zip(pins, files, strict=True):
            _run(f"unpack {pin.package} {pin.version}", ["dpkg", "-x", str(deb), str(root)])
        shutil.rmtree(debs, ignore_errors=True)  # the unpacked tree is what we keep
        packages = [pin.package for pin in pins]
        stamp.write_text(" ".join(packages) + "\n")
        (base / "fetch-seconds").write_text(f"{time.monotonic() - began:.1f}\n")
        return SidPrefix(root, packages)


def _download(mirror: str, pin: SidPin, folder: Path) -> Path:
    """``pin``'s file from the mirror into ``folder``, checked against its SHA-256 and size."""
    url = f"{mirror}/{pin.path}"
    target = folder / Path(pin.path).name
    digest = hashlib.sha256()
    size = 0
    try:
        with urllib.request.urlopen(url, timeout=_DOWNLOAD_TIMEOUT) as response, open(target, "wb") as out:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
                out.write(chunk)
    except urllib.error.HTTPError as err:
        if err.code == 404:
            raise SidFetchError(f"sid package {pin.package} {pin.version} is gone from {mirror} ({url}: HTTP "
                                f"404; sid's pool keeps only current builds): refresh the pins with "
                                f"`{REFRESH_COMMAND}`") from None
        raise SidFetchError(f"sid fetch of {pin.package} {pin.version}: {url}: HTTP {err.code} "
                            f"{err.reason}") from None
    except (OSError, urllib.error.URLError) as err:
        raise SidFetchError(f"sid fetch of {pin.package} {pin.version}: {url}: {err}") from None
    if digest.hexdigest() != pin.sha256 or size != pin.size:
        raise SidFetchError(f"sid package {pin.package} {pin.version}: {url} has SHA-256 "
                            f"{digest.hexdigest()} ({size} bytes), not the pinned {pin.sha256} ({pin.size} "
                            f"bytes): the mirror serves another file under the pinned name; refresh the pins "
                            f"on purpose with `{REFRESH_COMMAND}` if sid rebuilt it")
    return target


def _run(step: str, cmd: list[str], cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=_APT_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise SidFetchError(f"sid fetch, {step}: {err}") from err
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-8:])
        raise SidFetchError(f"sid fetch, {step}: exit {done.returncode}: {tail}")
    return done.stdout


# --- refreshing the pins, on purpose ------------------------------------------------------------------------


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


def _closure(options: list[str], packages: Sequence[str], recurse: bool) -> list[str]:
    if not recurse:
        return list(packages)
    out = _run("resolve the dependency closure",
               ["apt-cache", *options, "depends", "--recurse", "--no-recommends", "--no-suggests",
                "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances", *packages])
    names = {line.strip() for line in out.splitlines() if line and not line.startswith((" ", "<"))}
    return sorted(name for name in names if not name.startswith(_SKIPPED_PREFIXES))


def _index_pins(options: list[str], packages: Sequence[str]) -> list[SidPin]:
    """The candidate build of each package in the downloaded index: version, pool path, SHA-256, size."""
    out = _run("read the package index", ["apt-cache", *options, "show", "--no-all-versions", *packages])
    pins = []
    for stanza in out.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in stanza.splitlines() if ": " in line and line[0] != " ")
        if "Package" in fields:
            pins.append(SidPin(fields["Package"], fields["Version"], fields["Filename"], fields["SHA256"],
                               int(fields["Size"])))
    missing = sorted(set(packages) - {pin.package for pin in pins})
    if missing:
        raise SidFetchError(f"sid's index has no build of {', '.join(missing)}")
    return sorted(pins)


def refresh_pins(mirror: str) -> dict[str, list[SidPin]]:
    """Every set of ``sid_pins.WANTED`` resolved against sid's index now (apt-get update into a private
    temporary state): the pins of each."""
    with tempfile.TemporaryDirectory(prefix="sid-pins-") as scratch:
        state = Path(scratch)
        for folder in (state / "lists/partial", state / "apt-cache/archives/partial"):
            folder.mkdir(parents=True)
        (state / "sid.list").write_text(f"deb {mirror} sid main\n")
        (state / "empty-status").touch()
        options = _apt_options(state)
        updated = _run("apt-get update", ["apt-get", *options, "-q", "update"])
        # apt-get update exits 0 when a mirror cannot be reached; an index that never arrived says so.
        if not any((state / "lists").glob("*_Packages*")):
            problems = [line for line in updated.splitlines() if line.startswith(("W:", "E:", "Err"))]
            raise SidFetchError(f"sid pins, apt-get update: no package index from {mirror} "
                                f"({'; '.join(problems[-3:]) or 'no error given'})")
        return {name: _index_pins(options, _closure(options, roots, recurse))
                for name, (roots, recurse) in sid_pins.WANTED.items()}


_PINS_HEADER = '''"""The exact Debian sid builds the sid test servers run (binlog_model.testing.sid): one
table, renewed on purpose with ``python -m binlog_model.testing.sid --refresh-pins --write`` (review the
diff, run the server tests, commit), never edited by hand.

Refreshed {date} from {mirror}.
"""

from __future__ import annotations

#: (package, version, path in the mirror's pool, SHA-256, size in bytes)
Pin = tuple[str, str, str, str, int]

#: what each set asks sid for: its root packages, and whether their dependency closure comes too
WANTED: dict[str, tuple[tuple[str, ...], bool]] = {{
{wanted}
}}

'''


def pins_module(sets: dict[str, list[SidPin]], mirror: str) -> str:
    """The text of ``sid_pins.py`` holding ``sets`` (and the current ``WANTED``)."""
    wanted = "\n".join(f"    {name!r}: ({roots!r}, {recurse!r})," for name, (roots, recurse)
                        in sid_pins.WANTED.items())
    lines = [_PINS_HEADER.format(date=time.strftime("%Y-%m-%d"), mirror=mirror, wanted=wanted)
             + "PINS: dict[str, tuple[Pin, ...]] = {"]
    for name, pins in sets.items():
        lines.append(f"    {name!r}: (")
        lines += [f"        ({p.package!r}, {p.version!r},\n         {p.path!r},\n"
                  f"         {p.sha256!r}, {p.size}),"
                  for p in pins]
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m binlog_model.testing.sid --refresh-pins [--write]``: print a new ``sid_pins.py`` (sid's
    builds today), or with ``--write`` replace the module with it, to be reviewed and committed. The cache
    is untouched: new pins are fetched into a folder of their own on first use."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m binlog_model.testing.sid", description=main.__doc__)
    parser.add_argument("--refresh-pins", action="store_true", required=True,
                        help="resolve sid_pins.WANTED against sid's index now and print the new table")
    parser.add_argument("--write", action="store_true", help="write it to binlog_model/testing/sid_pins.py")
    parser.add_argument("--mirror", default=os.environ.get("BINLOG_MODEL_SID_MIRROR", _DEFAULT_MIRROR))
    args = parser.parse_args(argv)
    mirror = args.mirror.rstrip("/")
    try:
        sets = refresh_pins(mirror)
    except SidFetchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    text = pins_module(sets, mirror)
    if args.write:
        Path(sid_pins.__file__).write_text(text, encoding="utf-8")
        print(f"wrote {sid_pins.__file__}: " + ", ".join(f"{name} {len(pins)} packages"
                                                        for name, pins in sets.items()))
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
