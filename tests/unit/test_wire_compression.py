"""The one MariaDB compressed-payload helper that QUERY_COMPRESSED and the compressed ROWS events share.

Real compressed events come from MariaDB in tests/differential/test_decoder_mariadb.py; here the payloads
are HAND-BUILT (zlib output behind a hand-written header) to reach each corruption case.
"""

from __future__ import annotations

import zlib

import pytest

from binlog_model.errors import DecodeError, TruncatedEventError
from binlog_model.wire.compression import inflate_mariadb

TEXT = b"INSERT INTO t VALUES (1, 'abc'), (2, 'def')"


def _payload(data: bytes, nlen: int = 1, size: int | None = None) -> bytes:
    size = len(data) if size is None else size
    return bytes([0x80 | nlen]) + size.to_bytes(nlen, "big") + zlib.compress(data)


@pytest.mark.parametrize("nlen", [1, 2, 3, 4])
def test_inflates_with_every_length_width(nlen: int) -> None:
    assert inflate_mariadb(_payload(TEXT, nlen), "q") == TEXT
    assert inflate_mariadb(memoryview(_payload(TEXT, nlen)), "q") == TEXT


def test_empty_payload_is_truncated() -> None:
    with pytest.raises(TruncatedEventError, match="has no compression header byte"):
        inflate_mariadb(b"", "compressed rows event")


@pytest.mark.parametrize("first", [0x01, 0x80, 0x85, 0x87])
def test_bad_header_byte(first: int) -> None:
    expected = f"QUERY_COMPRESSED query: bad compression header byte 0x{first:02x}"
    with pytest.raises(DecodeError, match=expected):
        inflate_mariadb(bytes([first]) + b"\x00" * 8, "QUERY_COMPRESSED query")


def test_length_bytes_cut_short() -> None:
    with pytest.raises(TruncatedEventError, match="needs 3 bytes but only 1 remain"):
        inflate_mariadb(b"\x83\x00", "q")


def test_corrupt_stream() -> None:
    with pytest.raises(DecodeError, match="compressed rows event does not inflate"):
        inflate_mariadb(b"\x81\x10garbage", "compressed rows event")


def test_stream_cut_before_its_end() -> None:
    cut = _payload(TEXT)[:-4]  # the adler32 trailer gone: every byte of output, but no stream end
    with pytest.raises(DecodeError, match="q does not inflate: the zlib stream is cut short"):
        inflate_mariadb(cut, "q")


@pytest.mark.parametrize("claimed", [len(TEXT) - 1, len(TEXT) + 1, 0])
def test_length_disagrees_with_stream(claimed: int) -> None:
    with pytest.raises(DecodeError, match=r"inflates to \d+ bytes, header says " + str(claimed)):
        inflate_mariadb(_payload(TEXT, 2, claimed), "q")
