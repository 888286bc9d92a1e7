"""binlog_model.charsets: collation ids → charsets, charsets → Python codecs, checked against real servers.

The server tests are the authority: every collation id MariaDB 10.11 and MySQL 9 know must map to the charset
information_schema names, and for every single-byte charset with a codec, each of the 256 bytes must
decode to the character the server itself produces when converting that byte to utf8mb4.
"""

from __future__ import annotations

import codecs

import pytest

from binlog_model.charsets import (
    CHARSET_CODECS,
    charset_for_collation_id,
    charset_for_collation_name,
    collation_name_for_id,
    is_binary_charset,
    make_text_decoder,
    normalize_charset,
)
from binlog_model.testing.localserver import LocalServer


def test_every_codec_exists() -> None:
    for charset, codec in CHARSET_CODECS.items():
        if codec is not None:
            assert codecs.lookup(codec), charset
            assert make_text_decoder(charset) is not None
        else:
            assert make_text_decoder(charset) is None


def test_mysql8_only_ids() -> None:
    # MySQL 8.0 ids absent from MariaDB (facts from MySQL's collation list).
    assert charset_for_collation_id(255) == "utf8mb4"   # utf8mb4_0900_ai_ci, MySQL 8's default
    assert charset_for_collation_id(309) == "utf8mb4"   # utf8mb4_0900_bin
    assert charset_for_collation_id(248) == "gb18030"
    assert charset_for_collation_id(76) == "utf8mb3"    # utf8mb3_tolower_ci
    assert charset_for_collation_id(0) is None
    assert charset_for_collation_id(100) is None
    assert charset_for_collation_id(10**6) is None


def test_names() -> None:
    assert normalize_charset(" UTF8 ") == "utf8mb3"
    assert charset_for_collation_name("utf8_general_ci") == "utf8mb3"
    assert charset_for_collation_name("utf8mb4_0900_ai_ci") == "utf8mb4"
    assert charset_for_collation_name("UTF8MB3_BIN") == "utf8mb3"
    assert charset_for_collation_name("binary") == "binary"
    assert charset_for_collation_name("latin1_swedish_ci") == "latin1"
    assert is_binary_charset("BINARY") and not is_binary_charset(None) and not is_binary_charset("latin1")


def test_invalid_bytes_raise_unicode_error_for_the_caller() -> None:
    decode = make_text_decoder("utf8mb4")
    assert decode is not None
    with pytest.raises(UnicodeDecodeError):
        decode(b"\xc3")


@pytest.mark.server
def test_collation_ids_agree_with_the_server(server: LocalServer, request: pytest.FixtureRequest) -> None:
    if server.family == "MariaDB":   # MariaDB 10.10+ lists each id with its full name here
        rows = server.query("SELECT ID, CHARACTER_SET_NAME, FULL_COLLATION_NAME "
                            "FROM information_schema.COLLATION_CHARACTER_SET_APPLICABILITY")
    else:
        rows = server.query("SELECT ID, CHARACTER_SET_NAME, COLLATION_NAME "
                            "FROM information_schema.COLLATIONS")
    assert len(rows) > {"MariaDB": 500, "MySQL": 280}[server.family]
    wrong = {cid: (charset, charset_for_collation_id(cid)) for cid, charset, _ in rows
             if charset_for_collation_id(cid) != charset}
    assert wrong == {}
    names = {name: charset for _, charset, name in rows if charset_for_collation_name(name) != charset}
    assert names == {}
    # the generated id → name table (binlog_model/_collations.py) names every id as this server does
    mariadb = server.family == "MariaDB"
    misnamed = {cid: (name, collation_name_for_id(cid, mariadb=mariadb)) for cid, _, name in rows
                if collation_name_for_id(cid, mariadb=mariadb) != name.lower()}
    assert misnamed == {}


@pytest.mark.server
def test_single_byte_charsets_decode_like_the_server(server: LocalServer) -> None:
    charsets = [r[0] for r in server.query(
        "SELECT CHARACTER_SET_NAME FROM information_schema.CHARACTER_SETS WHERE MAXLEN = 1")]
    checked = 0
    for charset in charsets:
        decode = make_text_decoder(charset)
        if decode is None:
            continue
        exprs = ", ".join(f"HEX(CONVERT(CONVERT(UNHEX('{b:02X}') USING {charset}) USING utf8mb4))"
                          for b in range(256))
        (server_row,) = server.query(f"SELECT {exprs}")
        for b, server_hex in enumerate(server_row):
            # MySQL gives NULL for a byte its charset has no character for; MariaDB gives '?'.
            server_text = None if server_hex is None else bytes.fromhex(server_hex).decode("utf-8")
            try:
                ours: str | None = decode(bytes([b]))
            except UnicodeDecodeError:
                ours = None
            if ours is None:
                # Undefined for us (kept as RawText): the server must have no character there either.
                assert server_text in ("?", "\ufffd", None) and b != 0x3F, f"{charset} byte 0x{b:02X}"
            else:
                assert ours == server_text, f"{charset} byte 0x{b:02X}"
                checked += 1
    assert checked > 4000


@pytest.mark.server
@pytest.mark.parametrize(("charset", "text"), [
    ("sjis", "日本語テキスト"), ("cp932", "①髙"), ("ujis", "日本語"), ("gbk", "中文字符"),
    ("gb2312", "中文"), ("big5", "繁體中文"), ("euckr", "한국어"), ("utf16", "😀ab"),
    ("utf16le", "😀ab"), ("utf32", "😀ab"), ("ucs2", "Ωab"), ("utf8mb3", "ab€"),
])
def test_multibyte_charsets_decode_like_the_server(server: LocalServer, charset: str, text: str) -> None:
    (row,) = server.query(f"SELECT HEX(CONVERT(%s USING {charset}))", args=(text,))
    decode = make_text_decoder(charset)
    assert decode is not None
    assert decode(bytes.fromhex(row[0])) == text
