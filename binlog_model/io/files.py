"""Reading binlog files, local or in object storage: a thin loop around the sans-IO ``BinlogDecoder``.

Strategy: each file is read in fixed-size chunks (memory stays flat whatever the file size) and fed to a
fresh decoder, since every binlog file starts with its own magic and FORMAT_DESCRIPTION. Many files are
read in rotation order (numeric suffix, as the server numbers them). gzip-compressed files are detected
by their magic bytes and read transparently. Errors come from the decoder with the file name filled in.
``iter_slice`` is the one read loop: a whole file, or a byte range of it that resumes the decoder with the
file's FORMAT_DESCRIPTION bytes (a Spark slice), optionally skipping event bodies by type (the DDL pre-pass).
``expand_paths`` turns files, directories, prefixes and globs into files in rotation order.

Names are local paths or URIs. A local path (or ``file://`` URI) is opened with ``open()``; any other URI
(``s3://``, ``gs://``, ``hdfs://``, ``abfs://`` ...) through ``pyarrow.fs`` (fsspec where pyarrow has no
filesystem for the scheme), as a random-access file: a read at an offset is a ranged request, so a Spark
slice fetches its own byte range, never the whole object. Credentials and endpoints come from the
filesystem library's standard configuration (``AWS_*`` environment, profiles, instance roles); a URI that
carries credentials is refused, so they never reach a plan or a log line.
"""

from __future__ import annotations

import fnmatch
import gzip
import os
import re
import threading
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs, unquote, urlsplit

from binlog_model.errors import ConfigError, DecodeError, DecoderStateError
from binlog_model.position import file_key
from binlog_model.wire.decoder import NEED_DATA, BinlogDecoder
from binlog_model.wire.events import RotateEvent

__all__ = [
    "SliceReader",
    "absolute_name",
    "base_name",
    "binlog_size",
    "expand_paths",
    "is_uri",
    "iter_events",
    "iter_lines",
    "iter_slice",
    "list_binlog_files",
    "missing_local_path",
    "name_like",
    "open_binlog",
    "open_input",
    "output_filesystem",
    "sort_binlog_files",
    "sort_binlog_names",
]

_GZIP_MAGIC = b"\x1f\x8b"

PathLike = str | os.PathLike[str]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")
# Schemes whose pyarrow paths are "bucket/key" (the URI's netloc is the bucket).
_BUCKET_SCHEMES = frozenset({"s3", "s3a", "gs", "gcs"})
_SECRET_KEYS = frozenset({"access_key", "secret_key", "session_token", "password", "sas_token",
                          "account_key", "token"})
_GLOB_CHARS = re.compile(r"[*?\[]")


def is_uri(name: PathLike) -> bool:
    """True for ``scheme://...`` names other than ``file://`` (those are read as local paths)."""
    m = _SCHEME.match(os.fspath(name))
    return m is not None and m.group(1).lower() != "file"


def _local(name: PathLike) -> str:
    text = os.fspath(name)
    if text[:7].lower() == "file://":
        parts = urlsplit(text)
        return unquote(parts.path)
    return text


def absolute_name(name: PathLike) -> str:
    """A name every machine of a cluster reads the same way: a local path (or ``file://`` URI) made
    absolute, since executors run in other working directories; a URI as it is."""
    return os.fspath(name) if is_uri(name) else os.path.abspath(_local(name))


def base_name(name: PathLike) -> str:
    """The file's own name (``mysql-bin.000042``) of a path or URI."""
    return os.fspath(name).rstrip("/").rsplit("/", 1)[-1]


def sort_binlog_names(names: Iterable[PathLike]) -> list[str]:
    """Order binlog paths or URIs as the server wrote them: by numeric suffix, then by name."""
    return sorted((os.fspath(n) for n in names), key=lambda n: file_key(base_name(n)))


def sort_binlog_files(paths: Iterable[PathLike]) -> list[Path]:
    """Order binlog files as the server wrote them: by numeric suffix, then by name."""
    return sorted((Path(p) for p in paths), key=lambda p: file_key(p.name))


# One filesystem object per scheme and bucket/host: building one (an S3 client) costs far more than a read.
_FILESYSTEMS: dict[tuple[str, str], Any] = {}
_FS_LOCK = threading.Lock()


def _remote(uri: str) -> tuple[Any, str]:
    """(pyarrow filesystem, path inside it) for a URI; ``ConfigError`` for a scheme nothing can read or a
    URI carrying credentials."""
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if _SECRET_KEYS & {k.lower() for k in parse_qs(parts.query)} or parts.password:
        raise ConfigError(f"{scheme}:// URI {base_name(uri.split('?', 1)[0])!r} carries credentials: give "
                          "them through the filesystem's standard configuration (environment variables, "
                          "profiles, instance roles), never in a path")
    key = (scheme, parts.netloc)
    with _FS_LOCK:
        fs = _FILESYSTEMS.get(key) if not parts.query else None
    if fs is None:
        fs, path = _new_filesystem(uri, scheme)
        if not parts.query:
            with _FS_LOCK:
                _FILESYSTEMS[key] = fs
        return fs, path
    path = unquote(parts.path)
    return fs, (parts.netloc + path if scheme in _BUCKET_SCHEMES else path)


def _new_filesystem(uri: str, scheme: str) -> tuple[Any, str]:
    import pyarrow.fs as pafs

    arrow_uri = "s3" + uri[len(scheme):] if scheme == "s3a" else uri
    try:
        return pafs.FileSystem.from_uri(arrow_uri)
    except (ValueError, NotImplementedError) as arrow_err:    # no pyarrow filesystem: try fsspec
        try:
            import fsspec
        except ImportError:
            raise ConfigError(f"cannot read {scheme}:// paths: pyarrow says {arrow_err}; install fsspec "
                              "and its package for that scheme") from arrow_err
        try:
            fs, path = fsspec.core.url_to_fs(uri)
        except (ImportError, ValueError) as err:
            raise ConfigError(f"cannot read {scheme}:// paths: pyarrow says {arrow_err}; fsspec says "
                              f"{err}") from err
        return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), path


def _to_uri(template: str, fs_path: str) -> str:
    """The URI of ``fs_path`` in the filesystem that ``template`` (a URI) names."""
    parts = urlsplit(template)
    scheme = parts.scheme
    if scheme.lower() in _BUCKET_SCHEMES:
        return f"{scheme}://{fs_path}"
    return f"{scheme}://{parts.netloc}/{fs_path.lstrip('/')}"


def output_filesystem(name: PathLike) -> tuple[Any, str]:
    """(pyarrow filesystem, path inside it) to write under ``name``: a local path (or ``file://`` URI),
    made absolute, on the local filesystem; a URI through the same filesystems as the reader's
    (``s3a://`` as ``s3://``)."""
    text = os.fspath(name)
    if not is_uri(text):
        import pyarrow.fs as pafs

        return pafs.LocalFileSystem(), os.path.abspath(_local(text))
    fs, path = _remote(text)
    return fs, path.rstrip("/")


def name_like(template: PathLike, fs_path: str) -> str:
    """``fs_path`` (a path inside ``template``'s filesystem, as ``output_filesystem`` gives it) as a name of
    the same kind as ``template``: a local path, or a URI of the same scheme (and host)."""
    text = os.fspath(template)
    if not is_uri(text):
        return fs_path
    scheme, _, rest = text.partition("://")
    if scheme.lower() in ("s3", "s3a", "gs", "gcs"):
        return f"{scheme}://{fs_path}"
    return f"{scheme}://{rest.split('/', 1)[0]}/{fs_path.lstrip('/')}"


def binlog_size(name: PathLike) -> int:
    """The file's size in bytes (of the stored file: a gzip file's compressed size)."""
    text = os.fspath(name)
    try:
        if not is_uri(text):
            return os.path.getsize(_local(text))
        fs, path = _remote(text)
        info = fs.get_file_info(path)
    except OSError as err:
        raise ConfigError(f"cannot open binlog file {text}: {err}") from err
    if info.size is None:
        raise ConfigError(f"cannot open binlog file {text}: not found")
    return int(info.size)


def list_binlog_files(name: PathLike) -> list[str]:
    """The binlog files ``name`` stands for, in binlog order: the file itself, every ``*.NNNNNN`` file of a
    directory (or object prefix), or the files a glob matches. The server's side files (the ``.index``
    list, MariaDB's ``<binlog>.idx`` GTID indexes) are passed over, whether a glob such as ``binlog.*``
    matches them or a shell expanded it into their names: a side file named alone gives ``[]``. Local
    names come back absolute. Raises ``ConfigError`` when nothing matches."""
    text = os.fspath(name)
    if _is_side_file(text):
        return []
    found = _list_remote(text) if is_uri(text) else _list_local(absolute_name(text))
    if not found:
        raise ConfigError(f"no binlog files match {text!r}: give binlog files, a folder holding them or a "
                          "glob")
    return sort_binlog_names(found)


def _is_binlog_name(name: str) -> bool:
    return base_name(name).rpartition(".")[2].isdigit() and "." in base_name(name)


def _is_side_file(name: str) -> bool:
    """A file a server keeps beside its binlogs, never a binlog: the ``<base>.index`` list of binlog names,
    and the GTID index ``<binlog>.idx`` MariaDB 11.4+ writes for each binlog (``mysql-bin.000001.idx``)."""
    stem, _, suffix = base_name(name).rpartition(".")
    return suffix == "index" or (suffix == "idx" and _is_binlog_name(stem))


def _list_local(text: str) -> list[str]:
    import glob

    path = Path(text)
    if path.is_dir():
        return [str(p) for p in path.iterdir() if p.is_file() and _is_binlog_name(p.name)]
    if path.is_file():
        return [text]
    return [os.path.abspath(m) for m in glob.glob(text) if os.path.isfile(m) and not _is_side_file(m)]


def _list_remote(uri: str) -> list[str]:
    import pyarrow.fs as pafs

    try:
        fs, path = _remote(uri)
        path = path.rstrip("/")
        if not _GLOB_CHARS.search(path):
            info = fs.get_file_info(path)
            if info.type == pafs.FileType.File:
                return [uri]
            if info.type != pafs.FileType.Directory:
                return []
            return [_to_uri(uri, i.path) for i in fs.get_file_info(pafs.FileSelector(path))
                    if i.type == pafs.FileType.File and _is_binlog_name(i.path)]
        # A glob: list from the last folder before the first wildcard, match component by component.
        pattern = path.split("/")
        first = next(i for i, part in enumerate(pattern) if _GLOB_CHARS.search(part))
        base = "/".join(pattern[:first])
        infos = fs.get_file_info(pafs.FileSelector(base, recursive=first < len(pattern) - 1,
                                                   allow_not_found=True))
    except OSError as err:
        raise ConfigError(f"cannot list {uri}: {err}") from err
    return [_to_uri(uri, i.path) for i in infos
            if i.type == pafs.FileType.File and not _is_side_file(i.path)
            and len(parts := i.path.rstrip("/").split("/")) == len(pattern)
            and all(fnmatch.fnmatchcase(p, q) for p, q in zip(parts, pattern, strict=True))]


def missing_local_path(name: PathLike) -> bool:
    """True for a local path (not a URI, not a glob) that does not exist: a stream's folder may be empty
    but must be there."""
    text = os.fspath(name)
    return not is_uri(text) and not _GLOB_CHARS.search(text) and not os.path.exists(_local(text))


def open_binlog(path: PathLike) -> IO[bytes] | gzip.GzipFile:
    """Open a binlog file (a local path or a URI) for reading, gunzipping it transparently when it starts
    with the gzip magic. A URI opens as a random-access file: ``seek`` then ``read(n)`` fetches those
    ``n`` bytes only.

    Raises ``ConfigError`` when the file cannot be opened."""
    return open_input(path, "binlog file")


def open_input(path: PathLike, what: str) -> IO[bytes] | gzip.GzipFile:
    """Open an input file (a local path or a URI; ``what`` names it in errors) as ``open_binlog`` does."""
    text = os.fspath(path)
    try:
        if is_uri(text):
            fs, inner = _remote(text)
            fh: Any = fs.open_input_file(inner)
        else:
            fh = open(_local(text), "rb")  # noqa: SIM115 - returned to the caller, who closes it
        magic = fh.read(2)
        fh.seek(0)
    except OSError as err:
        raise ConfigError(f"cannot open {what} {text}: {err}") from err
    if magic == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")
    return fh


def iter_lines(path: PathLike, what: str) -> Iterator[bytes]:
    """The lines of an input file (``open_input``), without their ends, read a megabyte at a time: memory
    holds a line, not the file."""
    with open_input(path, what) as fh:
        rest = b""
        while chunk := fh.read(1 << 20):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from lines
        if rest:
            yield rest


def expand_paths(paths: PathLike | Iterable[PathLike]) -> list[str]:
    """Files named by ``paths`` (local paths or URIs such as ``s3://bucket/binlogs/``): files, directories
    or prefixes (every ``*.NNNNNN`` binlog file in them) or globs, in rotation order (``mysql-bin.000009``
    before ``mysql-bin.000010``), each file once, the server's ``.index`` and ``.idx`` files passed over.
    Every command and the Spark source name their inputs through this one function. Local paths come back
    absolute, so executors in other working directories open the same files. Raises ``ConfigError`` when
    nothing matches."""
    items = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    found: list[str] = []
    for item in items:
        found.extend(list_binlog_files(item))
    if not found:
        raise ConfigError(f"no binlog files found in {[os.fspath(i) for i in items]}")
    return sort_binlog_names(dict.fromkeys(found))


def iter_events(paths: PathLike | Iterable[PathLike], *, verify_checksum: bool = True,
                chunk_size: int = 1 << 20, skip_types: frozenset[int] = frozenset(),
                sort: bool = True, strict_rotation: bool = False,
                raw_undecodable: bool = False) -> Iterator[Any]:
    """Yield the events of one binlog file, or of several in rotation order.

    Each event's ``header.file`` is the file's path as given and ``header.offset`` its position there.
    With ``sort`` (default) several files are ordered by numeric suffix; pass ``sort=False`` to keep the
    given order. With ``strict_rotation`` a ROTATE_EVENT at the end of a file must name the next file
    given, else ``DecoderStateError`` (a gap in the sequence). ``skip_types``: event types returned as
    ``SkippedEvent`` (header and checksum checked, body skipped by the header's length; see
    ``iter_slice``). ``raw_undecodable`` (diagnostics only) yields an event whose body does not decode as
    ``UndecodableEvent`` and goes on (see ``BinlogDecoder``).

    Raises ``ConfigError`` (unreadable file, bad chunk size) and the decoder's ``DecodeError`` subclasses
    (``BadMagicError``, ``TruncatedEventError``, ``ChecksumMismatchError`` ...) naming the file. gzip
    corruption becomes a ``DecodeError``.
    """
    if chunk_size <= 0:
        raise ConfigError(f"chunk_size must be positive, got {chunk_size}")
    given = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    # Local names as ``Path`` spells them (as before); URIs untouched (a Path would fold their "//").
    names = [os.fspath(p) if is_uri(p) else str(Path(p)) for p in given]
    if sort and len(names) > 1:
        names = sort_binlog_names(names)
    expected_next: str | None = None
    for name in names:
        if strict_rotation and expected_next is not None and base_name(name) != expected_next:
            raise DecoderStateError(f"the previous file rotates to {expected_next!r} but the next file "
                                    f"given is {base_name(name)!r}: files are missing from the sequence")
        expected_next = None
        for event in iter_slice(name, verify_checksum=verify_checksum, chunk_size=chunk_size,
                                skip_types=skip_types, raw_undecodable=raw_undecodable):
            if isinstance(event, RotateEvent) and event.header.inner_index is None:
                expected_next = event.next_file
            yield event


def iter_slice(path: PathLike, start: int = 0, end: int | None = None,
               format_description: bytes | None = None, *, verify_checksum: bool = True,
               skip_types: frozenset[int] = frozenset(), chunk_size: int = 1 << 20,
               raw_undecodable: bool = False) -> Iterator[Any]:
    """The events of the byte range ``[start, end)`` of one binlog file: ``iter(SliceReader(...))``."""
    return iter(SliceReader(path, start, end, format_description, verify_checksum=verify_checksum,
                            skip_types=skip_types, chunk_size=chunk_size, raw_undecodable=raw_undecodable))


class SliceReader:
    """The one read loop: the events of the byte range ``[start, end)`` of one binlog file (``end`` None:
    to the end of the file), the whole file by default. ``iter_events`` reads whole files with it, the
    Spark layer its slices and its DDL pre-pass, ``io.tail`` incremental runs.

    A range after the file's start begins at an event boundary and resumes the decoder with the raw
    bytes of the file's FORMAT_DESCRIPTION event (``format_description``, which ``decoder``'s
    ``format_description_bytes`` gives after a read of the file's head). Offsets are positions in the
    (decompressed) binlog, as the server wrote it. ``skip_types``: event types the decoder returns as
    ``SkippedEvent`` without parsing the body (the DDL pre-pass skips rows and table maps this way, by
    their header length); with ``drop_skipped`` they are not yielded at all, and ``verify_skipped`` and
    ``skip_transactions`` are the decoder's (see ``BinlogDecoder``).

    ``partial_tail``: the input may end inside an event (the active binlog of a running server): reading
    stops before that event instead of raising ``TruncatedEventError``; ``read_until`` (the offset just
    after the last byte read) minus ``decoder.offset`` is then the size of that partial event.

    Raises ``ConfigError`` (unreadable file, bad range) and ``DecodeError`` subclasses naming the file and
    offset; a read that fails (I/O, gzip or zlib corruption) is a ``DecodeError`` too."""

    def __init__(self, path: PathLike, start: int = 0, end: int | None = None,
                 format_description: bytes | None = None, *, verify_checksum: bool = True,
                 skip_types: frozenset[int] = frozenset(), chunk_size: int = 1 << 20,
                 raw_undecodable: bool = False, partial_tail: bool = False,
                 drop_skipped: bool = False, verify_skipped: bool = True,
                 skip_transactions: bool = False) -> None:
        self.name = os.fspath(path)
        if chunk_size <= 0:
            raise ConfigError(f"chunk_size must be positive, got {chunk_size}")
        if start < 0 or (end is not None and end < start):
            raise ConfigError(f"bad byte range [{start}, {end}) of {self.name}")
        if start == 0:
            self.decoder = BinlogDecoder(file=self.name, verify_checksum=verify_checksum,
                                         skip_types=skip_types, raw_undecodable=raw_undecodable)
        elif format_description is None:
            raise ConfigError(f"a range of {self.name} that starts at {start} needs the file's "
                              "FORMAT_DESCRIPTION bytes")
        else:
            self.decoder = BinlogDecoder.resume(format_description, start, file=self.name,
                                                verify_checksum=verify_checksum, skip_types=skip_types)
            self.decoder.raw_undecodable = raw_undecodable
        self.decoder.drop_skipped = drop_skipped
        self.decoder.verify_skipped = verify_skipped
        self.decoder.skip_transactions = skip_transactions
        self.start = start
        self.end = end
        self.chunk_size = chunk_size
        self.partial_tail = partial_tail
        self.read_until = start
        self._started = False

    def __iter__(self) -> Iterator[Any]:
        # One pass: the decoder's state belongs to the bytes already fed.
        if self._started:
            raise ConfigError(f"a SliceReader of {self.name} is read once; make a new one to read again")
        self._started = True
        return self._events()

    def _events(self) -> Iterator[Any]:
        name, decoder = self.name, self.decoder
        remaining = None if self.end is None else self.end - self.start
        with open_binlog(name) as fh:
            if self.start:
                _read(fh.seek, name, decoder.offset, self.start)
            while True:
                size = self.chunk_size if remaining is None else min(self.chunk_size, remaining)
                chunk = _read(fh.read, name, decoder.offset, size) if size else b""
                if remaining is not None:
                    remaining -= len(chunk)
                self.read_until += len(chunk)
                # a statement lane may wait for the next chunk only while there is one to read
                decoder.lane_may_wait = bool(chunk)
                if chunk or not self.partial_tail:
                    # b"" tells the decoder the input is over: a partial event then raises. With
                    # partial_tail it is never sent, so the decoder just waits for bytes never read.
                    decoder.receive_data(chunk)
                while (event := decoder.next_event()) is not NEED_DATA:
                    yield event
                if not chunk:
                    return


def _read(operation: Any, name: str, offset: int, size: int) -> Any:
    """``operation(size)`` (a read or seek of an open binlog), with a failure of the file or of its gzip
    stream as a ``DecodeError`` at ``offset``: ``zlib.error`` is no ``OSError`` and would escape."""
    try:
        return operation(size)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as err:
        raise DecodeError(f"cannot read the file: {err}", file=name, offset=offset) from err
