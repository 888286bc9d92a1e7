"""Applying MySQL partial JSON updates (``binlog_row_value_options=PARTIAL_JSON``) to a JSON tree.

Strategy: follow the server's own ``apply_json_diffs`` (``sql/json_diff.cc``) step by step, because a
replica applies exactly these rules and the new document must equal what ``SELECT`` returns:

* a diff path has no wildcards or ranges, only member names and array cells (``[3]``, ``[last]``,
  ``[last-2]``); an empty path (``$``) is never valid;
* REPLACE needs the value at the path to exist (no auto-wrapping of scalars into arrays);
* INSERT needs the parent to exist: into an object only under a key that is absent, into an array at the
  cell's position clamped to the array's length (so past the end appends);
* REMOVE needs the object member, or the array cell within bounds, to exist.

Anything else is what the server calls REJECTED: the before image is not the document the diffs were made
for. That is a ``JsonDiffError``, never a guess. Objects keep MySQL's key order (shorter keys first, then
byte order), which an INSERT must respect so the rendered text equals the server's.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any

from binlog_model.errors import JsonDiffError
from binlog_model.wire.values import NOT_PRESENT, JsonDiff, JsonDiffs, JsonDocument

__all__ = ["apply_json_diff_text", "apply_json_diffs", "parse_diff_path", "parse_json_text",
           "resolve_partial_row"]

# A path leg: ("member", name) or ("cell", index, from_end).
Leg = tuple[Any, ...]

_CELL = re.compile(r"\[\s*(?:(last)(?:\s*-\s*(\d+))?|(\d+))\s*\]")
_IDENT_END = re.compile(r"[.\[]")


def parse_diff_path(path: str) -> list[Leg]:
    """The legs of a diff path such as ``$.a."b c"[2][last-1]``; ``JsonDiffError`` for any other form."""
    if not path.startswith("$"):
        raise JsonDiffError(f"JSON diff path {path!r} does not start with $")
    legs: list[Leg] = []
    pos, end = 1, len(path)
    while pos < end:
        ch = path[pos]
        if ch == ".":
            pos += 1
            if path.startswith('"', pos):
                try:
                    name, pos = json.JSONDecoder().raw_decode(path, pos)
                except ValueError as exc:
                    raise JsonDiffError(f"JSON diff path {path!r}: bad quoted member name") from exc
            else:
                m = _IDENT_END.search(path, pos)
                stop = m.start() if m else end
                name = path[pos:stop]
                pos = stop
                if not name or name == "*" or "*" in name:
                    raise JsonDiffError(f"JSON diff path {path!r}: wildcard or empty member name")
            legs.append(("member", name))
        elif ch == "[":
            m = _CELL.match(path, pos)
            if m is None:
                raise JsonDiffError(f"JSON diff path {path!r}: unsupported array leg at {pos} "
                                    "(diffs hold no wildcards or ranges)")
            if m.group(1):
                legs.append(("cell", int(m.group(2) or 0), True))
            else:
                legs.append(("cell", int(m.group(3)), False))
            pos = m.end()
        else:
            raise JsonDiffError(f"JSON diff path {path!r}: unexpected {ch!r} at {pos}")
    return legs


def _position(leg: Leg, size: int) -> tuple[int, bool]:
    # MySQL's Json_array_index: (position clamped to [0, size], whether the cell is within bounds).
    _, index, from_end = leg
    if from_end:
        return (size - index - 1 if index < size else 0), index < size
    return min(index, size), index < size


def _seek(doc: Any, legs: Sequence[Leg]) -> tuple[bool, Any]:
    """The value at ``legs`` (exact: no auto-wrapping), as ``(found, value)``."""
    node = doc
    for leg in legs:
        if isinstance(node, list):
            if leg[0] != "cell":
                return False, None
            at, inside = _position(leg, len(node))
            if not inside:
                return False, None
            node = node[at]
        elif isinstance(node, dict):
            if leg[0] != "member" or leg[1] not in node:
                return False, None
            node = node[leg[1]]
        else:
            return False, None
    return True, node


def _key_order(key: str) -> tuple[int, bytes]:
    raw = key.encode("utf-8")
    return len(raw), raw


def _copy(value: Any) -> Any:
    # Containers are rebuilt (the before image's tree is shared with the before column); leaves are immutable.
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def apply_json_diffs(document: Any, diffs: Sequence[JsonDiff]) -> Any:
    """A new tree: ``document`` (a JSON tree as in ``JsonDocument.value``) with ``diffs`` applied in order.

    ``document`` is not modified. Raises ``JsonDiffError`` where MySQL would reject the diff (the path
    does not resolve in this document), naming the diff and why.
    """
    doc = _copy(document)
    for n, diff in enumerate(diffs):
        legs = parse_diff_path(diff.path)
        where = f"diff {n} ({diff.operation} {diff.path})"
        if not legs:
            raise JsonDiffError(f"{where}: a diff never targets the document root")
        found, parent = _seek(doc, legs[:-1])
        last = legs[-1]
        if not found:
            raise JsonDiffError(f"{where}: the parent of the path is not in the before value")
        value = _copy(diff.value)
        if diff.operation == "REPLACE":
            if isinstance(parent, dict) and last[0] == "member" and last[1] in parent:
                parent[last[1]] = value
            elif isinstance(parent, list) and last[0] == "cell" and _position(last, len(parent))[1]:
                parent[_position(last, len(parent))[0]] = value
            else:
                raise JsonDiffError(f"{where}: no value at the path in the before value")
        elif diff.operation == "INSERT":
            if isinstance(parent, dict) and last[0] == "member":
                if last[1] in parent:
                    raise JsonDiffError(f"{where}: the key already exists in the before value")
                parent[last[1]] = value
                ordered = sorted(parent.items(), key=lambda kv: _key_order(kv[0]))
                parent.clear()
                parent.update(ordered)
            elif isinstance(parent, list) and last[0] == "cell":
                parent.insert(_position(last, len(parent))[0], value)
            else:
                raise JsonDiffError(f"{where}: the parent is neither an object (member leg) nor an array "
                                    "(cell leg)")
        elif diff.operation == "REMOVE":
            if isinstance(parent, dict) and last[0] == "member" and last[1] in parent:
                del parent[last[1]]
            elif isinstance(parent, list) and last[0] == "cell" and _position(last, len(parent))[1]:
                del parent[_position(last, len(parent))[0]]
            else:
                raise JsonDiffError(f"{where}: nothing to remove at the path in the before value")
        else:
            raise JsonDiffError(f"{where}: unknown operation")
    return doc


def resolve_partial_row(before: Sequence[Any], after: Sequence[Any]) -> tuple[Any, ...]:
    """The after image of one PARTIAL_UPDATE_ROWS row with every diff column resolved where it can be.

    A diff column (``JsonDiffs``) whose before image holds the document becomes the new
    ``JsonDocument``; where the before image does not hold the column (MINIMAL image) the diffs stay as
    they are, for the model's ``json_diff`` value. A diff against SQL NULL is a ``JsonDiffError`` (MySQL
    never logs one: a NULL column is updated with a full value).
    """
    out = list(after)
    for i, value in enumerate(after):
        if type(value) is not JsonDiffs:
            continue
        old = before[i]
        if type(old) is JsonDocument:
            out[i] = JsonDocument(apply_json_diffs(old.value, value))
        elif old is None:
            raise JsonDiffError(f"column {i}: a partial JSON update of a NULL before value")
        elif old is not NOT_PRESENT:
            raise JsonDiffError(f"column {i}: a partial JSON update of a before value that is not JSON "
                                f"({type(old).__name__})")
    return tuple(out)


def _parse_float(text: str) -> Any:
    # MySQL prints DECIMAL plainly and doubles in shortest form, switching to an exponent for large and
    # small magnitudes: keep plain fractions exact (Decimal re-renders them digit for digit).
    return float(text) if "e" in text or "E" in text else Decimal(text)


def _parse_int(text: str) -> Any:
    return Decimal(text) if text == "-0" else int(text)   # a double -0 prints as "-0"


def parse_json_text(text: str) -> Any:
    """A JSON text as MySQL renders it, parsed into a tree that renders back to the same text."""
    return json.loads(text, parse_float=_parse_float, parse_int=_parse_int)


def apply_json_diff_text(document: str, diffs: Iterable[Any]) -> str:
    """A consumer's side of a ``json_diff`` value: the previous document's JSON text (as the model's
    ``json_value`` gave it) with the operations applied, as JSON text.

    ``diffs`` are model ``JsonDiffOperation`` messages (``value.json_diff.operations``) or wire ``JsonDiff``
    with JSON text values. Raises ``JsonDiffError`` where MySQL would reject an operation: then the
    consumer's previous document is not the server's.
    """
    names = {1: "REPLACE", 2: "INSERT", 3: "REMOVE"}
    parsed = []
    for d in diffs:
        op = d.operation if isinstance(d, JsonDiff) else names.get(d.op, str(d.op))
        text = d.value if isinstance(d, JsonDiff) else (d.value if d.HasField("value") else None)
        parsed.append(JsonDiff(op, d.path, None if text is None else parse_json_text(text)))
    return JsonDocument(apply_json_diffs(parse_json_text(document), parsed)).to_json()
