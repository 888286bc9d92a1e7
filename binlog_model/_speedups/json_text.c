/* MySQL binary JSON (json_binary.cc's format) -> the JSON text our model stores, in one pass.
 *
 * The reference is Python: JsonDocument(parse_json_binary(buf)).to_json() (binlog_model/wire/json_binary.py
 * and wire/values.py). This file must give the same bytes or give up: it applies every check the reference
 * applies (bounds of every read against the enclosing container, depth <= 100, the entry budget against
 * shared children, literal and type bytes, strict UTF-8), and returns BM_ERR_DATA where the reference
 * would raise. It also returns BM_ERR_DATA for what it leaves to the reference on purpose: DECIMAL and
 * temporal opaques (rare; they need the Decimal/datetime formatting) and objects whose keys are not in
 * MySQL's strict sort order (length, then bytes), since Python's dict would merge duplicate keys.
 * BM_ERR_DATA is never a verdict on the data, only "ask the reference". */
#include "json_text.h"

#include <stdio.h>

enum {
    J_SMALL_OBJECT = 0x00, J_LARGE_OBJECT = 0x01, J_SMALL_ARRAY = 0x02, J_LARGE_ARRAY = 0x03,
    J_LITERAL = 0x04, J_INT16 = 0x05, J_UINT16 = 0x06, J_INT32 = 0x07, J_UINT32 = 0x08,
    J_INT64 = 0x09, J_UINT64 = 0x0A, J_DOUBLE = 0x0B, J_STRING = 0x0C, J_OPAQUE = 0x0F,
};

#define J_MAX_DEPTH 100

typedef struct {
    const unsigned char *buf;   /* the whole document */
    int64_t budget;             /* container entries left (starts at the document's length) */
    bm_buf *out;
} jctx;

/* Is buf[pos:pos+n] inside buf[0:limit]? pos is never beyond limit when this is called. */
static inline int j_has(Py_ssize_t limit, Py_ssize_t pos, uint64_t n) {
    return pos >= 0 && pos <= limit && n <= (uint64_t)(limit - pos);
}

static inline uint32_t rd_u16(const unsigned char *p) { return (uint32_t)p[0] | ((uint32_t)p[1] << 8); }
static inline uint32_t rd_u32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t rd_u64(const unsigned char *p) {
    return (uint64_t)rd_u32(p) | ((uint64_t)rd_u32(p + 4) << 32);
}

static int put_str(bm_buf *out, const char *s) { return bm_buf_put(out, s, (Py_ssize_t)strlen(s)); }

/* 1 for the bytes a JSON string holds as they are: printable ASCII but '"' and '\\'. */
static const unsigned char plain_ascii[256] = {
#define R16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
    R16(0), R16(0),                                             /* 0x00-0x1f: control bytes */
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,             /* 0x20-0x2f: '"' at 0x22 */
    R16(1), R16(1),                                             /* 0x30-0x4f */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,             /* 0x50-0x5f: '\\' at 0x5c */
    R16(1), R16(1),                                             /* 0x60-0x7f */
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0)  /* 0x80-0xff: the UTF-8 path */
#undef R16
};

int bm_put_json_string(bm_buf *out, const unsigned char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (n <= 64) {
        /* Short plain ASCII (column names, most values): checked and copied in one pass; anything else
         * is written again below, over what this wrote. */
        if (bm_buf_reserve(out, n + 2) != BM_OK) return BM_ERR_PY;
        unsigned char *p = out->data + out->len;
        Py_ssize_t i = 0;
        while (i < n && plain_ascii[s[i]]) {
            p[i + 1] = s[i];
            i++;
        }
        if (i == n) {
            p[0] = '"';
            p[n + 1] = '"';
            out->len += n + 2;
            return BM_OK;
        }
    }
    if (!bm_utf8_valid(s, n)) return BM_ERR_DATA;
    if (bm_buf_byte(out, '"') != BM_OK) return BM_ERR_PY;
    Py_ssize_t run = 0;       /* start of the bytes not yet copied: plain text goes in runs */
    for (Py_ssize_t i = 0; i < n; i++) {
        /* Eight bytes at a time while none needs escaping (no control byte, '"' or '\\'): exact for
         * "any byte in the word", which is all the skip asks (bytes >= 0x80 are valid UTF-8 by now). */
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t quote = w ^ (ones * '"'), slash = w ^ (ones * '\\');
            uint64_t hit = ((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((slash - ones) & ~slash);
            if (hit & highs) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (bm_buf_put(out, s + run, i - run) != BM_OK) return BM_ERR_PY;
        char esc[7] = {'\\', 0, 0, 0, 0, 0, 0};
        Py_ssize_t len = 2;
        switch (c) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        default:
            esc[1] = 'u'; esc[2] = '0'; esc[3] = '0'; esc[4] = hex[c >> 4]; esc[5] = hex[c & 15];
            len = 6;
        }
        if (bm_buf_put(out, esc, len) != BM_OK) return BM_ERR_PY;
        run = i + 1;
    }
    if (bm_buf_put(out, s + run, n - run) != BM_OK || bm_buf_byte(out, '"') != BM_OK) return BM_ERR_PY;
    return BM_OK;
}

/* format_json_double: repr()'s shortest round-trip digits, exponent without '+' and leading zeros. */
static int put_double(bm_buf *out, double v) {
    if (Py_IS_NAN(v)) return put_str(out, "\"nan\"");
    if (Py_IS_INFINITY(v)) return put_str(out, v > 0 ? "\"inf\"" : "\"-inf\"");
    char *text = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (text == NULL) return BM_ERR_PY;
    int rc;
    char *e = strchr(text, 'e');
    if (e == NULL) {
        rc = put_str(out, text);
    } else {
        Py_ssize_t mant = e - text;
        if (mant >= 2 && text[mant - 2] == '.' && text[mant - 1] == '0') mant -= 2;
        const char *exp = e + 1;
        int negative = *exp == '-';
        while (*exp == '+' || *exp == '-') exp++;
        while (*exp == '0') exp++;
        rc = bm_buf_put(out, text, mant);
        if (rc == BM_OK) rc = put_str(out, negative ? "e-" : "e");
        if (rc == BM_OK) rc = put_str(out, *exp ? exp : "0");
    }
    PyMem_Free(text);
    return rc;
}

static int put_literal(bm_buf *out, unsigned char b) {
    switch (b) {
    case 0: return put_str(out, "null");
    case 1: return put_str(out, "true");
    case 2: return put_str(out, "false");
    default: return BM_ERR_DATA;
    }
}

/* The variable-length length of strings and opaques: 7 bits a byte, low first, at most 5 bytes. */
static int read_varlen(const unsigned char *buf, Py_ssize_t limit, Py_ssize_t pos, uint64_t *n,
                       Py_ssize_t *after) {
    uint64_t v = 0;
    for (int i = 0; i < 5; i++) {
        if (!j_has(limit, pos + i, 1)) return BM_ERR_DATA;
        unsigned char b = buf[pos + i];
        v |= (uint64_t)(b & 0x7F) << (7 * i);
        if (!(b & 0x80)) {
            *n = v;
            *after = pos + i + 1;
            return BM_OK;
        }
    }
    return BM_ERR_DATA;
}

static int put_base64(bm_buf *out, const unsigned char *s, Py_ssize_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > PY_SSIZE_T_MAX / 2) { PyErr_NoMemory(); return BM_ERR_PY; }
    if (bm_buf_reserve(out, (n + 2) / 3 * 4) != BM_OK) return BM_ERR_PY;
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = ((uint32_t)s[i] << 16) | ((uint32_t)s[i + 1] << 8) | s[i + 2];
        char q[4] = {abc[v >> 18], abc[(v >> 12) & 63], abc[(v >> 6) & 63], abc[v & 63]};
        if (bm_buf_put(out, q, 4) != BM_OK) return BM_ERR_PY;
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
        char q[4] = {abc[v >> 18], abc[(v >> 12) & 63], i + 1 < n ? abc[(v >> 6) & 63] : '=', '='};
        if (bm_buf_put(out, q, 4) != BM_OK) return BM_ERR_PY;
    }
    return BM_OK;
}

static int j_value(jctx *c, Py_ssize_t limit, unsigned t, Py_ssize_t start, int depth);

/* MySQL orders object keys by length, then bytes; strictly increasing means no duplicates. */
static int key_before(const unsigned char *a, uint32_t alen, const unsigned char *b, uint32_t blen) {
    if (alen != blen) return alen < blen;
    return memcmp(a, b, alen) < 0;
}

static int j_container(jctx *c, Py_ssize_t limit, unsigned t, Py_ssize_t start, int depth) {
    const unsigned char *buf = c->buf;
    int large = t == J_LARGE_OBJECT || t == J_LARGE_ARRAY;
    int is_object = t == J_SMALL_OBJECT || t == J_LARGE_OBJECT;
    Py_ssize_t w = large ? 4 : 2;
    if (!j_has(limit, start, (uint64_t)(2 * w))) return BM_ERR_DATA;
    uint64_t count = large ? rd_u32(buf + start) : rd_u16(buf + start);
    uint64_t size = large ? rd_u32(buf + start + w) : rd_u16(buf + start + w);
    if (!j_has(limit, start, size)) return BM_ERR_DATA;
    Py_ssize_t end = start + (Py_ssize_t)size;
    uint64_t key_entry = (uint64_t)w + 2, value_entry = 1 + (uint64_t)w;
    uint64_t header = 2 * (uint64_t)w + (is_object ? count * key_entry : 0) + count * value_entry;
    if (header > size) return BM_ERR_DATA;
    c->budget -= (int64_t)count;
    if (c->budget < 0) return BM_ERR_DATA;
    /* From here every entry lies inside the container (header <= size), and so inside buf[0:limit]. */
    Py_ssize_t keys_at = start + 2 * w;
    Py_ssize_t values_at = keys_at + (is_object ? (Py_ssize_t)(count * key_entry) : 0);
    const unsigned char *prev_key = NULL;
    uint32_t prev_len = 0;
    if (is_object) {
        for (uint64_t i = 0; i < count; i++) {
            const unsigned char *e = buf + keys_at + (Py_ssize_t)(i * key_entry);
            uint64_t koff = large ? rd_u32(e) : rd_u16(e);
            uint32_t klen = rd_u16(e + w);
            if ((uint64_t)start + koff + klen > (uint64_t)end) return BM_ERR_DATA;
            const unsigned char *key = buf + start + koff;
            if (!bm_utf8_valid(key, klen)) return BM_ERR_DATA;
            if (prev_key != NULL && !key_before(prev_key, prev_len, key, klen)) return BM_ERR_DATA;
            prev_key = key;
            prev_len = klen;
        }
    }
    int rc = bm_buf_byte(c->out, is_object ? '{' : '[');
    for (uint64_t i = 0; i < count && rc == BM_OK; i++) {
        if (i && (rc = put_str(c->out, ", ")) != BM_OK) break;
        if (is_object) {
            const unsigned char *e = buf + keys_at + (Py_ssize_t)(i * key_entry);
            uint64_t koff = large ? rd_u32(e) : rd_u16(e);
            if ((rc = bm_put_json_string(c->out, buf + start + koff, rd_u16(e + w))) != BM_OK) break;
            if ((rc = put_str(c->out, ": ")) != BM_OK) break;
        }
        const unsigned char *e = buf + values_at + (Py_ssize_t)(i * value_entry);
        unsigned vt = e[0];
        if (vt == J_LITERAL) rc = put_literal(c->out, e[1]);
        else if (vt == J_INT16) rc = bm_buf_i64(c->out, (int16_t)rd_u16(e + 1));
        else if (vt == J_UINT16) rc = bm_buf_u64(c->out, rd_u16(e + 1));
        else if (large && vt == J_INT32) rc = bm_buf_i64(c->out, (int32_t)rd_u32(e + 1));
        else if (large && vt == J_UINT32) rc = bm_buf_u64(c->out, rd_u32(e + 1));
        else {
            uint64_t voff = large ? rd_u32(e + 1) : rd_u16(e + 1);
            if (voff >= size) return BM_ERR_DATA;
            /* Nested reads are bounded by this container, as the reference's buf[:end]. */
            rc = j_value(c, end, vt, start + (Py_ssize_t)voff, depth + 1);
        }
    }
    if (rc != BM_OK) return rc;
    return bm_buf_byte(c->out, is_object ? '}' : ']');
}

static int j_value(jctx *c, Py_ssize_t limit, unsigned t, Py_ssize_t start, int depth) {
    const unsigned char *buf = c->buf;
    if (depth > J_MAX_DEPTH) return BM_ERR_DATA;
    switch (t) {
    case J_SMALL_OBJECT: case J_LARGE_OBJECT: case J_SMALL_ARRAY: case J_LARGE_ARRAY:
        return j_container(c, limit, t, start, depth);
    case J_LITERAL:
        if (!j_has(limit, start, 1)) return BM_ERR_DATA;
        return put_literal(c->out, buf[start]);
    case J_INT16:
        if (!j_has(limit, start, 2)) return BM_ERR_DATA;
        return bm_buf_i64(c->out, (int16_t)rd_u16(buf + start));
    case J_UINT16:
        if (!j_has(limit, start, 2)) return BM_ERR_DATA;
        return bm_buf_u64(c->out, rd_u16(buf + start));
    case J_INT32:
        if (!j_has(limit, start, 4)) return BM_ERR_DATA;
        return bm_buf_i64(c->out, (int32_t)rd_u32(buf + start));
    case J_UINT32:
        if (!j_has(limit, start, 4)) return BM_ERR_DATA;
        return bm_buf_u64(c->out, rd_u32(buf + start));
    case J_INT64:
        if (!j_has(limit, start, 8)) return BM_ERR_DATA;
        return bm_buf_i64(c->out, (int64_t)rd_u64(buf + start));
    case J_UINT64:
        if (!j_has(limit, start, 8)) return BM_ERR_DATA;
        return bm_buf_u64(c->out, rd_u64(buf + start));
    case J_DOUBLE: {
        if (!j_has(limit, start, 8)) return BM_ERR_DATA;
        uint64_t bits = rd_u64(buf + start);
        double v;
        memcpy(&v, &bits, sizeof v);
        return put_double(c->out, v);
    }
    case J_STRING: {
        uint64_t n;
        Py_ssize_t pos;
        if (read_varlen(buf, limit, start, &n, &pos) != BM_OK || !j_has(limit, pos, n)) return BM_ERR_DATA;
        return bm_put_json_string(c->out, buf + pos, (Py_ssize_t)n);
    }
    case J_OPAQUE: {
        if (!j_has(limit, start, 1)) return BM_ERR_DATA;
        unsigned mysql_type = buf[start];
        uint64_t n;
        Py_ssize_t pos;
        if (read_varlen(buf, limit, start + 1, &n, &pos) != BM_OK || !j_has(limit, pos, n)) return BM_ERR_DATA;
        /* NEWDECIMAL, DATE, TIME, DATETIME, TIMESTAMP: the reference formats them. */
        if (mysql_type == 246 || mysql_type == 10 || mysql_type == 11 || mysql_type == 12 || mysql_type == 7)
            return BM_ERR_DATA;
        char head[32];
        snprintf(head, sizeof head, "\"base64:type%u:", mysql_type);
        if (put_str(c->out, head) != BM_OK || put_base64(c->out, buf + pos, (Py_ssize_t)n) != BM_OK)
            return BM_ERR_PY;
        return bm_buf_byte(c->out, '"');
    }
    default:
        return BM_ERR_DATA;
    }
}

int bm_json_to_text(const unsigned char *buf, Py_ssize_t len, bm_buf *out) {
    if (len <= 0) return put_str(out, "null");  /* the empty binary value: JSON null */
    jctx c = {buf, (int64_t)len, out};
    return j_value(&c, len, buf[0], 1, 0);
}

PyObject *bm_py_json_text(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    bm_buf out;
    bm_buf_init(&out);
    int rc = bm_json_to_text(view.buf, view.len, &out);
    PyBuffer_Release(&view);
    PyObject *result;
    if (rc == BM_OK) result = PyUnicode_DecodeUTF8((const char *)out.data, out.len, "strict");
    else if (rc == BM_ERR_DATA) result = Py_NewRef(Py_None);
    else result = NULL;
    bm_buf_free(&out);
    return result;
}
