"""GTID sets: the transactions a run has done or a reader should skip, as MySQL and MariaDB write them.

Strategy: one class for every place a GTID set is read or written (the incremental run state, the Spark
``gtidSet`` option), so a set one of them prints is a set the others parse.

- MySQL: per transaction source a set of closed intervals of sequence numbers (gno). A source is a server
  UUID, or since MySQL 8.4 a (UUID, tag) pair. The text form is MySQL's own (``@@gtid_executed``): per UUID
  the untagged intervals, then each tag followed by its intervals, ``uuid:1-5:7:batch:1-3``; UUIDs joined
  by ``,`` (MySQL adds a newline after it, which the parser skips). Parsing also accepts a UUID given more
  than once and a tag straight after the UUID (``uuid:batch:1-3``). UUIDs print lowercase with dashes,
  tags lowercase (MySQL compares tags case-insensitively), intervals sorted and merged.
- MariaDB: a GTID list, one ``domain-server-seq`` per domain: every sequence number up to ``seq`` in that
  domain (as ``gtid_slave_pos``; sequence numbers only grow within a domain).
"""

from __future__ import annotations

import bisect
import re
import struct
import uuid
from typing import TYPE_CHECKING, Any

from binlog_model.errors import ConfigError
from binlog_model.wire import events as ev

if TYPE_CHECKING:
    from binlog_model._pb import binlog_event_pb2 as pb

__all__ = ["GtidSet"]

_INTERVAL = re.compile(r"(\d+)(?:-(\d+))?")
_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")      # MySQL: up to 32 characters, no digit first
_MARIADB = re.compile(r"(\d+)-(\d+)-(\d+)")
_EXPECTED = "expected uuid:1-5, uuid:1-5:tag:1-3 or domain-server-seq"


class GtidSet:
    """A MySQL GTID set and/or a MariaDB GTID list (see the module docstring). ``str()`` is the canonical
    text, ``parse`` reads it back (``ConfigError`` on bad text), ``to_json`` / ``from_json`` are the run
    state's form."""

    def __init__(self) -> None:
        # (uuid, tag) -> sorted, disjoint, non-adjacent [lo, hi] intervals; tag "" when untagged. Insertion
        # order is kept, so the state's JSON lists sources as the runs met them (as it always did).
        self._mysql: dict[tuple[str, str], list[list[int]]] = {}
        self._mariadb: dict[int, tuple[int, int]] = {}         # domain -> (server_id, seq)

    # --- building -----------------------------------------------------------------------------------------

    def add_mysql(self, source_uuid: str, gno: int, tag: str = "") -> None:
        """Add one MySQL GTID (``tag`` "" for an untagged one)."""
        self._add_interval(source_uuid, tag, gno, gno)

    def add_mariadb(self, domain: int, server_id: int, seq: int) -> None:
        """Record a MariaDB GTID: the latest of its domain (binlog order), replacing the one before."""
        self._mariadb[domain] = (server_id, seq)

    def add_event(self, event: ev.GtidEvent | ev.MariadbGtidEvent) -> None:
        """Record a decoded GTID event; an ANONYMOUS_GTID names no transaction and is passed over. The one
        place a run (``events --state``, ``resolve --state``) turns GTID events into its set."""
        if isinstance(event, ev.MariadbGtidEvent):
            self.add_mariadb(event.domain_id, event.header.server_id, event.seq_no)
        elif not event.anonymous:
            self.add_mysql(str(event.sid), event.gno, event.tag or "")

    def add_lane(self, gtids: list[tuple[Any, ...]]) -> None:
        """Record the GTIDs of whole transactions the statement lane read (``resolve.lane.TransactionRun``),
        as ``add_event`` records their GTID events: MySQL's (source uuid, gno), MariaDB's (domain,
        server_id, seq)."""
        for gtid in gtids:
            if len(gtid) == 2:
                self.add_mysql(*gtid)
            else:
                self.add_mariadb(*gtid)

    def _add_interval(self, source_uuid: str, tag: str, lo: int, hi: int) -> None:
        spans = self._mysql.setdefault((source_uuid, tag.lower()), [])
        if not spans or spans[-1][1] + 1 < lo:
            spans.append([lo, hi])                   # the common case: past everything so far
            return
        if spans[-1][0] <= lo:                       # overlaps or extends only the last interval
            spans[-1][1] = max(spans[-1][1], hi)     # (the next gno of a run of transactions)
            return
        # Anywhere else: insert, then merge the neighbours it overlaps or touches.
        at = bisect.bisect_left(spans, [lo, hi])
        spans.insert(at, [lo, hi])
        start = max(at - 1, 0)
        merged: list[list[int]] = []
        for span in spans[start:]:
            if merged and span[0] <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(list(span))
        spans[start:] = merged

    # --- reading ------------------------------------------------------------------------------------------

    def intervals(self, source_uuid: str, tag: str = "") -> list[tuple[int, int]]:
        """The merged gno intervals of one source, ascending."""
        return [(lo, hi) for lo, hi in self._mysql.get((source_uuid, tag.lower()), ())]

    def contains_mysql(self, source_uuid: str, gno: int, tag: str = "") -> bool:
        spans = self._mysql.get((source_uuid.lower(), tag.lower()))
        if not spans:
            return False
        at = bisect.bisect_right(spans, gno, key=lambda span: span[0]) - 1
        return at >= 0 and spans[at][0] <= gno <= spans[at][1]

    def contains_mariadb(self, domain: int, seq: int) -> bool:
        latest = self._mariadb.get(domain)
        return latest is not None and seq <= latest[1]

    def contains(self, event: pb.BinlogEvent) -> bool:
        """Whether a model event's transaction is in the set: MySQL by ``server_uuid`` (``uuid`` or
        ``uuid:tag``, as the assembler writes it) and gno, MariaDB by domain and sequence number."""
        if event.server_uuid:
            source_uuid, _, tag = event.server_uuid.partition(":")
            return self.contains_mysql(source_uuid, event.transaction_id, tag)
        if event.gtid:
            return self.contains_mariadb(event.gtid_domain_id, event.transaction_id)
        return False

    def __bool__(self) -> bool:
        return bool(self._mysql or self._mariadb)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GtidSet):
            return NotImplemented
        return str(self) == str(other)

    __hash__ = None  # type: ignore[assignment]     # mutable: not a dict key

    def __repr__(self) -> str:
        return f"GtidSet.parse({str(self)!r})"

    # --- text ---------------------------------------------------------------------------------------------

    def __str__(self) -> str:
        by_uuid: dict[str, list[tuple[str, list[list[int]]]]] = {}
        for (source_uuid, tag), spans in self._mysql.items():
            if spans:
                by_uuid.setdefault(source_uuid, []).append((tag, spans))
        parts = []
        for source_uuid in sorted(by_uuid):
            pieces = [source_uuid]
            for tag, spans in sorted(by_uuid[source_uuid]):      # "" (untagged) sorts first, as in MySQL
                if tag:
                    pieces.append(tag)
                pieces.extend(f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in spans)
            parts.append(":".join(pieces))
        parts.extend(f"{d}-{self._mariadb[d][0]}-{self._mariadb[d][1]}" for d in sorted(self._mariadb))
        return ",".join(parts)

    @classmethod
    def parse(cls, text: str) -> GtidSet:
        """A GTID set from its text (``str()``'s, MySQL's ``@@gtid_executed``, MariaDB's
        ``@@gtid_slave_pos``, or a mix). Raises ``ConfigError`` naming the bad item."""
        out = cls()
        for item in (i.strip() for i in text.split(",")):
            if not item:
                continue
            if ":" in item:
                out._parse_mysql(item)
                continue
            m = _MARIADB.fullmatch(item)
            if m is None:
                raise ConfigError(f"bad GTID set item {item!r} ({_EXPECTED})")
            domain = int(m.group(1))
            if domain in out._mariadb:
                raise ConfigError(f"bad GTID set: domain {domain} is given twice (a MariaDB GTID list has "
                                  "one domain-server-seq per domain)")
            out.add_mariadb(domain, int(m.group(2)), int(m.group(3)))
        return out

    def _parse_mysql(self, item: str) -> None:
        head, *rest = (p.strip() for p in item.split(":"))
        try:
            source_uuid = str(uuid.UUID(head))
        except ValueError:
            raise ConfigError(f"bad GTID set item {item!r}: {head!r} is not a server UUID "
                              f"({_EXPECTED})") from None
        tag, spans_of_tag = "", 0
        for part in rest:
            m = _INTERVAL.fullmatch(part)
            if m is not None:
                lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
                if lo < 1 or hi < lo:
                    raise ConfigError(f"bad GTID set item {item!r}: interval {part!r} (numbers start at 1, "
                                      "low-high ascending)")
                self._add_interval(source_uuid, tag, lo, hi)
                spans_of_tag += 1
            elif _TAG.fullmatch(part) and (spans_of_tag or not tag):
                tag, spans_of_tag = part.lower(), 0
            else:
                raise ConfigError(f"bad GTID set item {item!r}: {part!r} is neither an interval nor a tag "
                                  f"followed by intervals ({_EXPECTED})")
        if not spans_of_tag:
            raise ConfigError(f"bad GTID set item {item!r}: no interval after {tag or head!r} ({_EXPECTED})")

    # --- the replication protocol -------------------------------------------------------------------------

    def encode_mysql(self) -> bytes:
        """The MySQL part as ``COM_BINLOG_DUMP_GTID`` carries it (``Gtid_set::encode``): u64 source count,
        then per source its 16 UUID bytes, u64 interval count and u64 ``start``/``end`` pairs, ``end``
        exclusive. With a tagged source anywhere (MySQL 8.4+) the whole set uses the tagged format: the
        format byte 1 in the count's top and bottom bytes (the count in between), and each UUID followed by
        its tag as a length-prefixed string (the serialization library's variable-length integer)."""
        sources = sorted((key, spans) for key, spans in self._mysql.items() if spans)
        tagged = any(tag for (_, tag), _ in sources)
        count = len(sources)
        out = [struct.pack("<Q", (1 << 56) | (count << 8) | 1 if tagged else count)]
        for (source_uuid, tag), spans in sources:
            out.append(uuid.UUID(source_uuid).bytes)
            if tagged:
                raw = tag.encode("ascii")
                out.append(bytes([len(raw) << 1]) + raw)     # a length under 128: one byte, low bit 0
            out.append(struct.pack("<Q", len(spans)))
            out.extend(struct.pack("<QQ", lo, hi + 1) for lo, hi in spans)
        return b"".join(out)

    def add_previous_gtids(self, event: ev.PreviousGtidsEvent) -> None:
        """Add a file's PREVIOUS_GTIDS (everything the server executed before that file)."""
        for i, (sid, spans) in enumerate(event.gtid_sets):
            tag = event.tags[i] if i < len(event.tags) else ""
            for lo, end in spans:
                if end > lo:
                    self._add_interval(str(sid), tag, lo, end - 1)

    def add_gtid_list(self, event: ev.GtidListEvent) -> None:
        """Add a MariaDB file's GTID_LIST (the latest GTID of every domain before that file)."""
        for domain, server_id, seq in event.gtids:
            self.add_mariadb(domain, server_id, seq)

    def mariadb_text(self) -> str:
        """The MariaDB part alone, as ``@slave_connect_state`` takes it."""
        return ",".join(f"{d}-{self._mariadb[d][0]}-{self._mariadb[d][1]}" for d in sorted(self._mariadb))

    @property
    def has_mysql(self) -> bool:
        return any(self._mysql.values())

    @property
    def has_mariadb(self) -> bool:
        return bool(self._mariadb)

    # --- the run state's JSON -----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """``{"mysql": {"uuid" or "uuid:tag": [[lo, hi], ...]}, "mariadb": {"domain": "d-s-q"}}``."""
        return {"mysql": {f"{u}:{t}" if t else u: [list(s) for s in spans]
                          for (u, t), spans in self._mysql.items()},
                "mariadb": {str(d): f"{d}-{s}-{q}" for d, (s, q) in self._mariadb.items()}}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> GtidSet:
        out = cls()
        for source, spans in doc.get("mysql", {}).items():
            source_uuid, _, tag = source.partition(":")
            if not spans:
                out._mysql.setdefault((source_uuid, tag.lower()), [])
            for lo, hi in spans:
                out._add_interval(source_uuid, tag, int(lo), int(hi))
        for domain, text in doc.get("mariadb", {}).items():
            _, server_id, seq = (int(x) for x in text.split("-"))
            out.add_mariadb(int(domain), server_id, seq)
        return out
