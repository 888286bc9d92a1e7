"""Write the hand-mutated regression inputs of this folder from our own golden fixture binlog.

Run from the repository root: ``python -m tests.fuzz_regressions.make_hand_mutated``. Each input
reproduces a class of bug the fuzzer (``python -m benchmarks.fuzz``) found, on bytes of our own MariaDB
fixture (``fixtures/golden/mariadb/spec_example``), never on the shared corpus it mutated at the time
(that corpus is not to be copied into the repository). Event sizes and CRC32 footers are fixed up, so
each input is damaged only where it says.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchmarks.fuzz import binlog as bl

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parents[1] / "fixtures" / "golden" / "mariadb" / "spec_example" / "binlogs" / "mysql-bin.000001"

# Event offsets in the source file (see ``binlog-model dump`` of it).
_FORMAT_DESCRIPTION = 4
_GTID_LIST = 256
_CREATE_DATABASE = 370
_CREATE_CAMPAIGNS = 499
_ANNOTATE_INSERT = 885
_WRITE_ROWS = 1207
_XID_INSERT = 1292
_UPDATE_ROWS = 1609
_XID_UPDATE = 1671
_CREATE_FOOBAR = 2080
_MODIFY_FOOBAR = 2261


def _events() -> list[tuple[int, bl.Event]]:
    data = SOURCE.read_bytes()
    log = bl.split(data)
    out, pos = [], 4
    for event in log.events:
        out.append((pos, event))
        pos += len(event.raw)
    return out


def _write(name: str, last: int, edit: Callable[[dict[int, bl.Event]], None]) -> None:
    """Events from the start up to offset ``last`` (included), edited, sizes and CRCs fixed."""
    events = [(off, e) for off, e in _events() if off <= last]
    edit(dict(events))
    for _, e in events:
        bl.set_size(e)
    (HERE / name).write_bytes(bl.Binlog(bl.MAGIC, [e for _, e in events], b"").to_bytes())


def _replace(event: bl.Event, old: bytes, new: bytes) -> None:
    assert event.raw.count(old) == 1, (old, bytes(event.raw))
    event.raw[:] = event.raw.replace(old, new)


def _no_columns(at: int) -> Callable[[dict[int, bl.Event]], None]:
    def edit(events: dict[int, bl.Event]) -> None:
        layout = bl.rows_layout(events[at])
        assert layout is not None
        start = layout.bitmaps_at
        events[at].raw[start:start + layout.bitmap_len * layout.n_bitmaps] = bytes(
            layout.bitmap_len * layout.n_bitmaps)
    return edit


def _json_shared_children(depth: int = 40) -> bytes:
    """A binary JSON array of two entries that both point at the same child array, 40 levels deep:
    2**40 paths through 405 bytes (written by hand, not taken from any fixture)."""
    doc = bytearray([0x02])  # small array
    for level in range(depth):
        size = 10 * (depth - level) + 4  # this array's header and entries, plus everything below it
        doc += (2).to_bytes(2, "little") + size.to_bytes(2, "little")
        doc += b"\x02" + (10).to_bytes(2, "little") + b"\x02" + (10).to_bytes(2, "little")
    doc += (0).to_bytes(2, "little") + (4).to_bytes(2, "little")  # the innermost: an empty array
    return bytes(doc)


def _payload_claiming_4gib(events: dict[int, bl.Event]) -> None:
    """A TRANSACTION_PAYLOAD after the FDE (in place of GTID_LIST): a 30-byte zstd frame whose header
    fields claim 4 GiB - 1 uncompressed bytes."""
    import zstandard

    frame = zstandard.ZstdCompressor().compress(b"x" * 30)
    header = bytearray(events[_GTID_LIST].raw[:bl.HEADER])
    header[4] = bl.TRANSACTION_PAYLOAD
    payload = bl.build_payload(bytes(header), {1: len(frame), 2: 0, 3: (1 << 32) - 1}, frame, crc=True)
    events[_GTID_LIST].raw[:] = payload.raw


# Statements (for the ddl target) reproducing what the fuzzer's mutants of generated DDL broke: sqlglot or
# the tracker's walk over its tree raised TypeError / AttributeError instead of a typed error.
STATEMENTS = {
    "ddl-default-primary-key.hand-mutated.sql": "CREATE TABLE t2 (a int) DEFAULT PRIMARY KEY CHARSET=utf8mb3",
    "ddl-after-nothing.hand-mutated.sql": "ALTER TABLE t ADD b int AFTER",
    "ddl-truncate-call.hand-mutated.sql": "TRUNCATE TABLEnary(9)",
    "ddl-like-with-columns.hand-mutated.sql": "CREATE TABLE x LIKE y (id INT PRIMARY KEY, v VARCHAR(10))",
}


def main() -> None:
    for name, sql in STATEMENTS.items():
        (HERE / name).write_text(sql, encoding="utf-8")
    _write("payload-claims-4gib.hand-mutated.bin", _GTID_LIST, _payload_claiming_4gib)
    (HERE / "json-shared-children.hand-mutated.bin").write_bytes(_json_shared_children())
    _write("rows-no-column-present.hand-mutated.bin", _XID_INSERT, _no_columns(_WRITE_ROWS))
    _write("update-no-column-present.hand-mutated.bin", _XID_UPDATE, _no_columns(_UPDATE_ROWS))
    _write("annotate-invalid-utf8.hand-mutated.bin", _XID_INSERT,
           lambda ev: _replace(ev[_ANNOTATE_INSERT], b"'one'", b"'\xffne'"))
    _write("ddl-comment-invalid-utf8.hand-mutated.bin", _XID_INSERT,
           lambda ev: _replace(ev[_CREATE_CAMPAIGNS], b"\n)", b"\n) /* caf\xe9 */"))

    def latin1(ev: dict[int, bl.Event]) -> None:
        _replace(ev[_CREATE_CAMPAIGNS], b"\n)", b"\n) /* caf\xe9 */")
        # charset_client (status variable Q_CHARSET_CODE) utf8mb4_general_ci (45) -> latin1_swedish_ci (8)
        _replace(ev[_CREATE_CAMPAIGNS], b"\x04\x2d\x00\x2d\x00\x2d\x00", b"\x04\x08\x00\x2d\x00\x2d\x00")
    _write("ddl-comment-latin1.hand-mutated.bin", _XID_INSERT, latin1)
    _write("ddl-identifier-invalid-utf8.hand-mutated.bin", _CREATE_FOOBAR,
           lambda ev: _replace(ev[_CREATE_FOOBAR], b"foobar (", b"`foo\xffbar` ("))
    _write("ddl-unparsable-invalid-utf8.hand-mutated.bin", _MODIFY_FOOBAR,
           lambda ev: _replace(ev[_MODIFY_FOOBAR], b"int not null", b"int not null \xff("))

    def post_header_too_long(ev: dict[int, bl.Event]) -> None:
        # The FDE says EXECUTE_LOAD_QUERY (type 18) has a 200-byte post-header; the CREATE DATABASE QUERY
        # event becomes type 18, cut to a 25-byte body: the fixed fields before dup_handling fit, it does not.
        fde = ev[_FORMAT_DESCRIPTION].raw
        fde[bl.HEADER + 2 + 50 + 4 + 1 + 18 - 1] = 200
        query = ev[_CREATE_DATABASE]
        query.raw[4] = 18
        del query.raw[bl.HEADER + 25:-4]
    _write("post-header-past-body.hand-mutated.bin", _CREATE_DATABASE, post_header_too_long)
    _write("pk-unknown-column.hand-mutated.bin", _XID_INSERT,
           lambda ev: (_replace(ev[_CREATE_CAMPAIGNS], b"NOT NULL PRIMARY KEY,", b"NOT NULL,"),
                       _replace(ev[_CREATE_CAMPAIGNS], b"\n)", b",\n    PRIMARY KEY (`cjd`)\n)")))


if __name__ == "__main__":
    main()
