"""MySQL/MariaDB character sets and collations → Python codecs.

Strategy: facts only, in small tables. A collation id (TABLE_MAP optional metadata, QUERY_EVENT status vars)
maps to its character set through a sorted table of id ranges (``bisect``), covering every id of MariaDB
10.11's ``information_schema.COLLATION_CHARACTER_SET_APPLICABILITY`` (incl. the ``uca1400`` ids 2048+ and
the ``nopad`` ids 1024+) and the MySQL 8.0-only ids (17 filename, 76 utf8mb3_tolower_ci, 248-250 gb18030,
255-323 utf8mb4_*_0900_*). Ids at most 247 mean the same character set in both servers.

A character set maps to a Python codec only when the codec decodes the same bytes to the same text; charsets
without such a codec (dec8, hp8, swe7, armscii8, keybcs2, geostd8, eucjpms, filename) map to ``None`` and
their values stay bytes (``convert.py`` emits them as ``RawText``), so nothing is ever decoded wrongly.
Where the server's single-byte table differs from Python's (MySQL's ``latin1`` is cp1252 with its five holes
filled by C1 controls; a few bytes of hebrew, greek, koi8u, cp866, cp1256), a 256-entry charmap built from
the codec plus the server's differences decodes exactly as the server does; a test checks all 256 bytes of
every single-byte charset against a live MariaDB.
"""

from __future__ import annotations

import bisect
import codecs
from collections.abc import Callable

from binlog_model import _collations

__all__ = [
    "CHARSET_CODECS",
    "CHARSET_MAXLEN",
    "charset_for_collation_id",
    "charset_for_collation_name",
    "collation_name_for_id",
    "is_binary_charset",
    "make_text_decoder",
    "normalize_charset",
    "reread_text",
    "stored_text",
]

# (first id, last id, charset), sorted and non-overlapping.
_COLLATION_RUNS: tuple[tuple[int, int, str], ...] = (
    (1, 1, "big5"), (2, 2, "latin2"), (3, 3, "dec8"), (4, 4, "cp850"), (5, 5, "latin1"), (6, 6, "hp8"),
    (7, 7, "koi8r"), (8, 8, "latin1"), (9, 9, "latin2"), (10, 10, "swe7"), (11, 11, "ascii"),
    (12, 12, "ujis"), (13, 13, "sjis"), (14, 14, "cp1251"), (15, 15, "latin1"), (16, 16, "hebrew"),
    (17, 17, "filename"), (18, 18, "tis620"), (19, 19, "euckr"), (20, 20, "latin7"),
    (21, 21, "latin2"), (22, 22, "koi8u"), (23, 23, "cp1251"), (24, 24, "gb2312"), (25, 25, "greek"),
    (26, 26, "cp1250"), (27, 27, "latin2"), (28, 28, "gbk"), (29, 29, "cp1257"), (30, 30, "latin5"),
    (31, 31, "latin1"), (32, 32, "armscii8"), (33, 33, "utf8mb3"), (34, 34, "cp1250"),
    (35, 35, "ucs2"), (36, 36, "cp866"), (37, 37, "keybcs2"), (38, 38, "macce"), (39, 39, "macroman"),
    (40, 40, "cp852"), (41, 42, "latin7"), (43, 43, "macce"), (44, 44, "cp1250"), (45, 46, "utf8mb4"),
    (47, 49, "latin1"), (50, 52, "cp1251"), (53, 53, "macroman"), (54, 55, "utf16"),
    (56, 56, "utf16le"), (57, 57, "cp1256"), (58, 59, "cp1257"), (60, 61, "utf32"),
    (62, 62, "utf16le"), (63, 63, "binary"), (64, 64, "armscii8"), (65, 65, "ascii"),
    (66, 66, "cp1250"), (67, 67, "cp1256"), (68, 68, "cp866"), (69, 69, "dec8"), (70, 70, "greek"),
    (71, 71, "hebrew"), (72, 72, "hp8"), (73, 73, "keybcs2"), (74, 74, "koi8r"), (75, 75, "koi8u"),
    (76, 76, "utf8mb3"), (77, 77, "latin2"), (78, 78, "latin5"), (79, 79, "latin7"), (80, 80, "cp850"),
    (81, 81, "cp852"), (82, 82, "swe7"), (83, 83, "utf8mb3"), (84, 84, "big5"), (85, 85, "euckr"),
    (86, 86, "gb2312"), (87, 87, "gbk"), (88, 88, "sjis"), (89, 89, "tis620"), (90, 90, "ucs2"),
    (91, 91, "ujis"), (92, 93, "geostd8"), (94, 94, "latin1"), (95, 96, "cp932"), (97, 98, "eucjpms"),
    (99, 99, "cp1250"), (101, 124, "utf16"), (128, 151, "ucs2"), (159, 159, "ucs2"),
    (160, 183, "utf32"), (192, 215, "utf8mb3"), (223, 223, "utf8mb3"), (224, 247, "utf8mb4"),
    (248, 250, "gb18030"), (255, 323, "utf8mb4"), (576, 579, "utf8mb3"), (608, 611, "utf8mb4"),
    (640, 642, "ucs2"), (672, 674, "utf16"), (736, 738, "utf32"), (1025, 1025, "big5"),
    (1027, 1027, "dec8"), (1028, 1028, "cp850"), (1030, 1030, "hp8"), (1031, 1031, "koi8r"),
    (1032, 1032, "latin1"), (1033, 1033, "latin2"), (1034, 1034, "swe7"), (1035, 1035, "ascii"),
    (1036, 1036, "ujis"), (1037, 1037, "sjis"), (1040, 1040, "hebrew"), (1042, 1042, "tis620"),
    (1043, 1043, "euckr"), (1046, 1046, "koi8u"), (1048, 1048, "gb2312"), (1049, 1049, "greek"),
    (1050, 1050, "cp1250"), (1052, 1052, "gbk"), (1054, 1054, "latin5"), (1056, 1056, "armscii8"),
    (1057, 1057, "utf8mb3"), (1059, 1059, "ucs2"), (1060, 1060, "cp866"), (1061, 1061, "keybcs2"),
    (1062, 1062, "macce"), (1063, 1063, "macroman"), (1064, 1064, "cp852"), (1065, 1065, "latin7"),
    (1067, 1067, "macce"), (1069, 1070, "utf8mb4"), (1071, 1071, "latin1"), (1074, 1075, "cp1251"),
    (1077, 1077, "macroman"), (1078, 1079, "utf16"), (1080, 1080, "utf16le"), (1081, 1081, "cp1256"),
    (1082, 1083, "cp1257"), (1084, 1085, "utf32"), (1086, 1086, "utf16le"), (1088, 1088, "armscii8"),
    (1089, 1089, "ascii"), (1090, 1090, "cp1250"), (1091, 1091, "cp1256"), (1092, 1092, "cp866"),
    (1093, 1093, "dec8"), (1094, 1094, "greek"), (1095, 1095, "hebrew"), (1096, 1096, "hp8"),
    (1097, 1097, "keybcs2"), (1098, 1098, "koi8r"), (1099, 1099, "koi8u"), (1101, 1101, "latin2"),
    (1102, 1102, "latin5"), (1103, 1103, "latin7"), (1104, 1104, "cp850"), (1105, 1105, "cp852"),
    (1106, 1106, "swe7"), (1107, 1107, "utf8mb3"), (1108, 1108, "big5"), (1109, 1109, "euckr"),
    (1110, 1110, "gb2312"), (1111, 1111, "gbk"), (1112, 1112, "sjis"), (1113, 1113, "tis620"),
    (1114, 1114, "ucs2"), (1115, 1115, "ujis"), (1116, 1117, "geostd8"), (1119, 1120, "cp932"),
    (1121, 1122, "eucjpms"), (1125, 1125, "utf16"), (1147, 1147, "utf16"), (1152, 1152, "ucs2"),
    (1174, 1174, "ucs2"), (1184, 1184, "utf32"), (1206, 1206, "utf32"), (1216, 1216, "utf8mb3"),
    (1238, 1238, "utf8mb3"), (1248, 1248, "utf8mb4"), (1270, 1270, "utf8mb4"), (2048, 2215, "utf8mb3"),
    (2232, 2247, "utf8mb3"), (2304, 2471, "utf8mb4"), (2488, 2503, "utf8mb4"), (2560, 2727, "ucs2"),
    (2744, 2759, "ucs2"), (2816, 2983, "utf16"), (3000, 3015, "utf16"), (3072, 3239, "utf32"),
    (3256, 3271, "utf32"),
)
_RUN_STARTS = [run[0] for run in _COLLATION_RUNS]

# Charset → Python codec name (None: no faithful Python codec, values stay bytes).
CHARSET_CODECS: dict[str, str | None] = {
    "armscii8": None,
    "ascii": "ascii",
    "big5": "big5",
    "binary": None,
    "cp1250": "cp1250",
    "cp1251": "cp1251",
    "cp1256": "cp1256",
    "cp1257": "cp1257",
    "cp850": "cp850",
    "cp852": "cp852",
    "cp866": "cp866",
    "cp932": "cp932",
    "dec8": None,
    "eucjpms": None,  # EUC-JP with Microsoft extensions: Python's euc_jp differs on the extension rows
    "euckr": "euc_kr",
    "filename": None,
    "gb18030": "gb18030",
    "gb2312": "gb2312",
    "gbk": "gbk",
    "geostd8": None,
    "greek": "iso8859_7",
    "hebrew": "iso8859_8",
    "hp8": None,
    "keybcs2": None,
    "koi8r": "koi8_r",
    "koi8u": "koi8_u",
    "latin1": "cp1252",  # MySQL latin1 is cp1252 (see the module docstring for the 5 undefined bytes)
    "latin2": "iso8859_2",
    "latin5": "iso8859_9",
    "latin7": "iso8859_13",
    "macce": "mac_latin2",
    "macroman": "mac_roman",
    "sjis": "shift_jis",
    "swe7": None,
    "tis620": "tis_620",
    "ucs2": "utf_16_be",  # UCS-2 is stored big-endian
    "ujis": "euc_jp",
    "utf16": "utf_16_be",
    "utf16le": "utf_16_le",
    "utf32": "utf_32_be",
    "utf8mb3": "utf_8",
    "utf8mb4": "utf_8",
}

# Bytes per character at most (information_schema.CHARACTER_SETS.MAXLEN).
CHARSET_MAXLEN: dict[str, int] = {
    "big5": 2, "cp932": 2, "euckr": 2, "gb2312": 2, "gbk": 2, "sjis": 2, "ucs2": 2,
    "eucjpms": 3, "ujis": 3, "utf8mb3": 3, "filename": 5,
    "gb18030": 4, "utf16": 4, "utf16le": 4, "utf32": 4, "utf8mb4": 4,
}

# Charset-name aliases the servers accept; "utf8" means utf8mb3 in MySQL 5.7/8.0 and MariaDB (by default).
_ALIASES = {"utf8": "utf8mb3"}

# Where the server's single-byte tables differ from Python's codec of the same name (MariaDB 10.11,
# checked byte by byte in tests/unit/test_convert_charsets.py): a character, or None where the server has none
# (it converts the byte to '?'), so such bytes stay RawText instead of gaining a meaning the server lacks.
_SINGLE_BYTE_OVERRIDES: dict[str, dict[int, str | None]] = {
    # MySQL latin1 fills cp1252's five holes with the C1 controls of the same number.
    "latin1": {0x81: "\x81", 0x8D: "\x8d", 0x8F: "\x8f", 0x90: "\x90", 0x9D: "\x9d"},
    "hebrew": {0xAF: "\u203e"},
    "koi8u": {0x95: "\u2022"},
    "greek": {0xA1: "\u02bd", 0xA2: "\u02bc", 0xA4: None, 0xA5: None, 0xAA: None},
    "cp866": {0xFC: "\u207f", 0xFD: "\u00b2"},
    "cp1256": {0x8A: None, 0x8F: None, 0x98: None, 0x9A: None, 0x9F: None, 0xAA: None, 0xC0: None,
               0xFF: None},
}
_UNDEFINED = "\ufffe"  # charmap_decode's marker for "no character": strict decoding raises


def _charmap(codec: str, overrides: dict[int, str | None]) -> str:
    # A 256-entry decoding table: the codec's own mapping, then the server's differences.
    chars = []
    for b in range(256):
        if b in overrides:
            chars.append(overrides[b] or _UNDEFINED)
            continue
        try:
            chars.append(bytes([b]).decode(codec))
        except UnicodeDecodeError:
            chars.append(_UNDEFINED)
    return "".join(chars)


def normalize_charset(name: str) -> str:
    """Lowercase ``name`` and resolve aliases (``utf8`` → ``utf8mb3``)."""
    lowered = name.strip().lower()
    return _ALIASES.get(lowered, lowered)


def charset_for_collation_id(collation_id: int) -> str | None:
    """The character set of collation ``collation_id`` (MySQL 8.0 or MariaDB 10.11), or None if unknown."""
    i = bisect.bisect_right(_RUN_STARTS, collation_id) - 1
    if i >= 0:
        first, last, charset = _COLLATION_RUNS[i]
        if first <= collation_id <= last:
            return charset
    return None


def collation_name_for_id(collation_id: int, *, mariadb: bool) -> str | None:
    """The name of collation ``collation_id`` on MySQL (``mariadb=False``) or MariaDB, or None if unknown:
    ids 224-247 and 2048+ name different collations on the two servers (``_collations.py``)."""
    name = _collations.COMMON.get(collation_id)
    if name is None:
        name = (_collations.MARIADB if mariadb else _collations.MYSQL).get(collation_id)
    return name


def charset_for_collation_name(collation: str) -> str:
    """The character set a collation name belongs to: ``utf8mb4_0900_ai_ci`` → ``utf8mb4``.

    Collation names start with their charset name followed by ``_`` (``binary`` is its own charset);
    ``utf8_*`` names are utf8mb3 ones.
    """
    lowered = collation.strip().lower()
    if lowered == "binary":
        return "binary"
    head = lowered.split("_", 1)[0]
    if head == "utf8" and lowered.startswith("utf8mb"):
        head = lowered[:7]
    return normalize_charset(head)


def is_binary_charset(charset: str | None) -> bool:
    """True when ``charset`` is the ``binary`` pseudo charset (values are bytes, not text)."""
    return charset is not None and normalize_charset(charset) == "binary"


def stored_text(text: str, charset: str) -> str:
    """``text`` as a column of ``charset`` keeps it: every character the charset cannot hold becomes ``?``
    (what the servers do to an ENUM/SET label in CREATE TABLE, with only a warning). Charsets without a
    faithful codec are left as they are."""
    name = normalize_charset(charset)
    if name in ("utf8mb4", "utf16", "utf16le", "utf32", "gb18030", "binary"):
        return text
    if name in ("utf8mb3", "ucs2"):
        return "".join(ch if ord(ch) <= 0xFFFF else "?" for ch in text)
    codec, decode = CHARSET_CODECS.get(name), make_text_decoder(name)
    if codec is None or decode is None or text.isascii():
        return text
    out = []
    for ch in text:
        try:
            kept = decode(ch.encode(codec)) == ch   # a byte the server's table gives no character fails too
        except (UnicodeError, ValueError):
            kept = False
        out.append(ch if kept else "?")
    return "".join(out)


def reread_text(text: str, old: str, new: str) -> str | None:
    """``text`` stored in charset ``old`` with its bytes read in charset ``new`` (what ALTER TABLE … CONVERT
    TO CHARACTER SET does to ENUM/SET labels on both servers: '日' in utf8mb4 becomes 'Ф≈╔' in koi8r), or
    None where the outcome cannot be followed exactly (no codec, or bytes invalid in ``new``, which the
    server replaces in its own way)."""
    if text.isascii() and normalize_charset(new) not in ("ucs2", "utf16", "utf16le", "utf32"):
        return text
    old_codec, decode = CHARSET_CODECS.get(normalize_charset(old)), make_text_decoder(new)
    if old_codec is None or decode is None:
        return None
    try:
        return decode(text.encode(old_codec))
    except (UnicodeError, ValueError):
        return None


def make_text_decoder(charset: str) -> Callable[[bytes], str] | None:
    """A function decoding column bytes in ``charset`` to text, or None when no faithful codec exists.

    The returned function raises ``UnicodeDecodeError`` on bytes that are invalid in the charset (the
    caller decides what to do; ``convert.py`` keeps them as ``RawText``). Unknown charsets give None.
    """
    name = normalize_charset(charset)
    codec = CHARSET_CODECS.get(name)
    if codec is None:
        return None
    overrides = _SINGLE_BYTE_OVERRIDES.get(name)
    if overrides is not None:
        table = _charmap(codec, overrides)

        def decode_single_byte(data: bytes) -> str:
            return codecs.charmap_decode(data, "strict", table)[0]
        return decode_single_byte
    if codec == "utf_8":
        def decode_utf8(data: bytes) -> str:
            return data.decode("utf-8")
        return decode_utf8

    def decode(data: bytes) -> str:
        return data.decode(codec)
    return decode
