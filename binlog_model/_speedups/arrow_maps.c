/* Serialized BinlogEvents -> the Spark data source's map columns, as Arrow buffers (arrow_maps.c).
 *
 * Why: the data source's rows carry primaryKey/before/after as map<string,string> whose values are the
 * canonical proto3 JSON of each model Value ({"intValue":5}). Built in Python (upb views and Arrow
 * compute) that cost ~10 us per row, ten times the row builder itself. Here one pass over the events'
 * wire bytes writes the Arrow buffers of the three maps and the row index directly: no Python object per
 * row or value.
 *
 * Exactness: the text of every kind is byte-identical to binlog_model.spark.value_json.value_json (the
 * reference; json_format for the rare kinds). Kinds whose text is not worth writing in C (FLOAT and the
 * rare GEOMETRY, VECTOR, raw text, JSON diff, an empty Value) call the Python fallback given by the caller
 * with the Value's bytes. Anything a serializer would not write (unknown fields, a repeated oneof, wrong
 * wire types, invalid UTF-8, offsets past 2 GiB) returns None: the caller builds the batch the Python
 * way, which decides. Every length is checked against the buffer; nothing is read outside it.
 */
#include "arrow_maps.h"

#include <math.h>

/* Field numbers of binlog_model.v1 (proto/binlog_model/v1/binlog_event.proto). */
enum { EV_ROW_INDEX = 6, EV_OPERATION = 10, EV_ROWS = 11 };
enum { ROW_INDEX = 1, ROW_PK = 2, ROW_BEFORE = 3, ROW_AFTER = 4 };
enum { COL_NAME = 1, COL_VALUE = 2, COL_INVISIBLE = 3 };
enum { OP_INSERT = 1, OP_DELETE = 3 };
enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* One protobuf field read from [p, end). */
typedef struct {
    uint32_t number;
    int wire;
    uint64_t num;                 /* WT_VARINT */
    const unsigned char *data;    /* WT_LEN, WT_I64, WT_I32 */
    Py_ssize_t len;
} pb_field;

static int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return BM_ERR_DATA;
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) { *out = v; return BM_OK; }
    }
    return BM_ERR_DATA;
}

/* The next field at *p (< end), or BM_ERR_DATA for a truncated or group field. */
static int read_field(const unsigned char **p, const unsigned char *end, pb_field *f) {
    uint64_t tag;
    if (read_varint(p, end, &tag) != BM_OK || tag >> 3 == 0 || tag >> 3 > 0x1FFFFFFF) return BM_ERR_DATA;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->num = 0;
    switch (f->wire) {
    case WT_VARINT:
        return read_varint(p, end, &f->num);
    case WT_I64: case WT_I32: {
        Py_ssize_t n = f->wire == WT_I64 ? 8 : 4;
        if (end - *p < n) return BM_ERR_DATA;
        f->data = *p;
        f->len = n;
        *p += n;
        return BM_OK;
    }
    case WT_LEN: {
        uint64_t n;
        if (read_varint(p, end, &n) != BM_OK || n > (uint64_t)(end - *p)) return BM_ERR_DATA;
        f->data = *p;
        f->len = (Py_ssize_t)n;
        *p += n;
        return BM_OK;
    }
    default:
        return BM_ERR_DATA;
    }
}

/* Strict UTF-8 (what a protobuf string and an Arrow string hold): no overlongs, surrogates or > U+10FFFF. */
static int valid_utf8(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        int more;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { more = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { more = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { more = 3; cp = c & 0x07; }
        else return 0;
        if (n - i <= more) return 0;
        for (int k = 1; k <= more; k++) {
            if ((s[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (s[i + k] & 0x3F);
        }
        if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
            (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        i += more + 1;
    }
    return 1;
}

static int put_str(bm_buf *b, const char *s) { return bm_buf_put(b, s, (Py_ssize_t)strlen(s)); }

/* A JSON string literal of UTF-8 text s[0:n], escaped as json.dumps(ensure_ascii=False) does. */
static int put_json_string(bm_buf *b, const unsigned char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (!valid_utf8(s, n)) return BM_ERR_DATA;
    if (bm_buf_byte(b, '"') != BM_OK) return BM_ERR_PY;
    Py_ssize_t run = 0;       /* start of the bytes not yet copied */
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        if (bm_buf_put(b, s + run, i - run) != BM_OK) return BM_ERR_PY;
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
        if (bm_buf_put(b, esc, len) != BM_OK) return BM_ERR_PY;
        run = i + 1;
    }
    if (bm_buf_put(b, s + run, n - run) != BM_OK || bm_buf_byte(b, '"') != BM_OK) return BM_ERR_PY;
    return BM_OK;
}

static int put_base64(bm_buf *b, const unsigned char *s, Py_ssize_t n) {
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > (PY_SSIZE_T_MAX - 4) / 4 * 3 || bm_buf_reserve(b, (n + 2) / 3 * 4) != BM_OK) return BM_ERR_PY;
    unsigned char *o = b->data + b->len;
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        *o++ = alphabet[v >> 18]; *o++ = alphabet[(v >> 12) & 63]; *o++ = alphabet[(v >> 6) & 63];
        *o++ = alphabet[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)s[i] << 16;
        *o++ = alphabet[v >> 18]; *o++ = alphabet[(v >> 12) & 63]; *o++ = '='; *o++ = '=';
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
        *o++ = alphabet[v >> 18]; *o++ = alphabet[(v >> 12) & 63]; *o++ = alphabet[(v >> 6) & 63]; *o++ = '=';
    }
    b->len = o - b->data;
    return BM_OK;
}

/* Decimal digits of v (what "%llu" writes), without the printf machinery: this runs per value. */
static int put_u64(bm_buf *b, uint64_t v) {
    char tmp[20];
    int n = 0;
    do { tmp[sizeof tmp - ++n] = (char)('0' + v % 10); v /= 10; } while (v);
    return bm_buf_put(b, tmp + sizeof tmp - n, n);
}

static int put_i64(bm_buf *b, int64_t v) {
    if (v >= 0) return put_u64(b, (uint64_t)v);
    if (bm_buf_byte(b, '-') != BM_OK) return BM_ERR_PY;
    return put_u64(b, (uint64_t)0 - (uint64_t)v);     /* no overflow at INT64_MIN */
}

/* prefix, the number, suffix: {"longValue":"-5"} and the like. */
static int put_number(bm_buf *b, const char *prefix, int negative_ok, uint64_t v, const char *suffix) {
    if (put_str(b, prefix) != BM_OK) return BM_ERR_PY;
    if ((negative_ok ? put_i64(b, (int64_t)v) : put_u64(b, v)) != BM_OK) return BM_ERR_PY;
    return put_str(b, suffix) == BM_OK ? BM_OK : BM_ERR_PY;
}

/* DATE / DATETIME: {"year":2024,...} with the zero fields left out, as proto3 JSON does. */
static int put_datetime(bm_buf *b, const char *prefix, const unsigned char *p, Py_ssize_t n, int nfields) {
    static const char *names[] = {"year", "month", "day", "hour", "minute", "second", "micros"};
    uint32_t v[7] = {0};
    const unsigned char *end = p + n;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.wire != WT_VARINT || f.number > (uint32_t)nfields)
            return BM_ERR_DATA;
        v[f.number - 1] = (uint32_t)f.num;
    }
    if (put_str(b, prefix) != BM_OK) return BM_ERR_PY;
    int first = 1;
    for (int k = 0; k < nfields; k++) {
        if (!v[k]) continue;
        if (!first && bm_buf_byte(b, ',') != BM_OK) return BM_ERR_PY;
        if (bm_buf_byte(b, '"') != BM_OK || put_str(b, names[k]) != BM_OK || put_str(b, "\":") != BM_OK ||
            put_u64(b, v[k]) != BM_OK)
            return BM_ERR_PY;
        first = 0;
    }
    return put_str(b, "}}") == BM_OK ? BM_OK : BM_ERR_PY;
}

/* SET: {"setValue":{"labels":["a","c"]}}, or {"setValue":{}} without members. */
static int put_set(bm_buf *b, const unsigned char *p, Py_ssize_t n) {
    const unsigned char *end = p + n;
    int first = 1;
    if (put_str(b, "{\"setValue\":{") != BM_OK) return BM_ERR_PY;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.number != 1 || f.wire != WT_LEN) return BM_ERR_DATA;
        if (put_str(b, first ? "\"labels\":[" : ",") != BM_OK) return BM_ERR_PY;
        int rc = put_json_string(b, f.data, f.len);
        if (rc != BM_OK) return rc;
        first = 0;
    }
    return put_str(b, first ? "}}" : "]}}") == BM_OK ? BM_OK : BM_ERR_PY;
}

static int put_double(bm_buf *b, double v) {
    if (isnan(v)) return put_str(b, "\"NaN\"") == BM_OK ? BM_OK : BM_ERR_PY;
    if (isinf(v)) return put_str(b, v > 0 ? "\"Infinity\"" : "\"-Infinity\"") == BM_OK ? BM_OK : BM_ERR_PY;
    /* repr(float): the shortest text that reads back as v (what json.dumps writes). */
    char *text = PyOS_double_to_string(v, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!text) return BM_ERR_PY;
    int rc = put_str(b, text) == BM_OK ? BM_OK : BM_ERR_PY;
    PyMem_Free(text);
    return rc;
}

/* The kinds left to the Python fallback: its str result appended (BM_ERR_PY when it raises). */
static int put_fallback(bm_buf *b, PyObject *fallback, const unsigned char *p, Py_ssize_t n) {
    PyObject *text = PyObject_CallFunction(fallback, "y#", (const char *)p, n);
    if (!text) return BM_ERR_PY;
    Py_ssize_t len;
    const char *utf8 = PyUnicode_Check(text) ? PyUnicode_AsUTF8AndSize(text, &len) : NULL;
    int rc = utf8 ? (bm_buf_put(b, utf8, len) == BM_OK ? BM_OK : BM_ERR_PY) : BM_ERR_PY;
    if (!utf8 && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "arrow_maps: the fallback must return str");
    Py_DECREF(text);
    return rc;
}

/* The canonical JSON of one serialized Value p[0:n]. */
static int put_value(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    const unsigned char *end = p + n, *q = p;
    pb_field f;
    if (n == 0) return put_fallback(b, fallback, p, n);
    if (read_field(&q, end, &f) != BM_OK || q != end) return BM_ERR_DATA;   /* exactly one oneof member */
    static const int wire_of[21] = {-1, WT_VARINT, WT_VARINT, WT_VARINT, WT_LEN, WT_LEN, WT_LEN, WT_I64, WT_I32,
                                    WT_LEN, WT_LEN, WT_VARINT, WT_VARINT, WT_VARINT, WT_LEN, WT_LEN, WT_VARINT,
                                    WT_LEN, WT_LEN, WT_LEN, WT_LEN};
    if (f.number > 20 || f.wire != wire_of[f.number]) return BM_ERR_DATA;
    int rc;
    switch (f.number) {
    case 1: return put_str(b, "{\"nullValue\":null}") == BM_OK ? BM_OK : BM_ERR_PY;
    case 2: return put_number(b, "{\"intValue\":", 1, (uint64_t)(int64_t)(int32_t)(uint32_t)f.num, "}");
    case 3: return put_number(b, "{\"longValue\":\"", 1, f.num, "\"}");
    case 11: return put_number(b, "{\"timestampMicros\":\"", 1, f.num, "\"}");
    case 12: return put_number(b, "{\"timeMicros\":\"", 1, f.num, "\"}");
    case 13: return put_number(b, "{\"uint64Value\":\"", 0, f.num, "\"}");
    case 16: return put_number(b, "{\"bitValue\":\"", 0, f.num, "\"}");
    case 4: case 6: case 14:
        if (put_str(b, f.number == 4 ? "{\"stringValue\":" : f.number == 6 ? "{\"decimalValue\":"
                                                                           : "{\"jsonValue\":") != BM_OK)
            return BM_ERR_PY;
        rc = put_json_string(b, f.data, f.len);
        if (rc != BM_OK) return rc;
        return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
    case 5:
        if (put_str(b, "{\"bytesValue\":\"") != BM_OK) return BM_ERR_PY;
        rc = put_base64(b, f.data, f.len);
        if (rc != BM_OK) return rc;
        return put_str(b, "\"}") == BM_OK ? BM_OK : BM_ERR_PY;
    case 7: {
        uint64_t bits = 0;
        for (int k = 7; k >= 0; k--) bits = bits << 8 | f.data[k];
        double v;
        memcpy(&v, &bits, sizeof v);
        if (put_str(b, "{\"doubleValue\":") != BM_OK) return BM_ERR_PY;
        rc = put_double(b, v);
        if (rc != BM_OK) return rc;
        return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
    }
    case 9: return put_datetime(b, "{\"datetimeValue\":{", f.data, f.len, 7);
    case 10: return put_datetime(b, "{\"dateValue\":{", f.data, f.len, 3);
    case 15: return put_set(b, f.data, f.len);
    default:        /* 8 FLOAT (shortest float32 text), 17-20 the rare kinds */
        return put_fallback(b, fallback, p, n);
    }
}

/* One map column: validity bits per row, entry offsets per row, then the keys and values as Arrow strings. */
typedef struct {
    bm_buf valid, offsets, key_offsets, keys, value_offsets, values;
    int32_t entries;
    Py_ssize_t nulls;
} map_col;

static int put_i32(bm_buf *b, Py_ssize_t v) {
    if (v > INT32_MAX) return BM_ERR_DATA;       /* a string column past 2 GiB: the Python path decides */
    int32_t x = (int32_t)v;
    return bm_buf_put(b, &x, sizeof x) == BM_OK ? BM_OK : BM_ERR_PY;
}

static int map_init(map_col *m) {
    bm_buf *all[] = {&m->valid, &m->offsets, &m->key_offsets, &m->keys, &m->value_offsets, &m->values};
    for (int k = 0; k < 6; k++) bm_buf_init(all[k]);
    m->entries = 0;
    m->nulls = 0;
    if (put_i32(&m->offsets, 0) != BM_OK || put_i32(&m->key_offsets, 0) != BM_OK ||
        put_i32(&m->value_offsets, 0) != BM_OK)
        return BM_ERR_PY;
    return BM_OK;
}

static void map_free(map_col *m) {
    bm_buf *all[] = {&m->valid, &m->offsets, &m->key_offsets, &m->keys, &m->value_offsets, &m->values};
    for (int k = 0; k < 6; k++) bm_buf_free(all[k]);
}

/* Close row `row` of the map: its validity bit and its end offset. */
static int map_end_row(map_col *m, Py_ssize_t row, int valid) {
    if (row % 8 == 0 && bm_buf_byte(&m->valid, 0) != BM_OK) return BM_ERR_PY;
    if (valid) m->valid.data[row / 8] |= (unsigned char)(1u << (row % 8));
    else m->nulls++;
    return put_i32(&m->offsets, m->entries);
}

/* One Column entry p[0:n]: its name as the key, its value's JSON as the item. */
static int map_add_column(map_col *m, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    const unsigned char *end = p + n, *name = (const unsigned char *)"", *value = NULL;
    Py_ssize_t name_len = 0, value_len = 0;
    int seen_name = 0, seen_value = 0;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK) return BM_ERR_DATA;
        if (f.number == COL_NAME && f.wire == WT_LEN && !seen_name) {
            name = f.data; name_len = f.len; seen_name = 1;
        } else if (f.number == COL_VALUE && f.wire == WT_LEN && !seen_value) {
            value = f.data; value_len = f.len; seen_value = 1;
        } else if (!(f.number == COL_INVISIBLE && f.wire == WT_VARINT)) {
            return BM_ERR_DATA;
        }
    }
    if (!valid_utf8(name, name_len)) return BM_ERR_DATA;
    int rc;
    if (bm_buf_put(&m->keys, name, name_len) != BM_OK) return BM_ERR_PY;
    if ((rc = put_i32(&m->key_offsets, m->keys.len)) != BM_OK) return rc;
    if ((rc = put_value(&m->values, value ? value : (const unsigned char *)"", value_len, fallback)) != BM_OK)
        return rc;
    if ((rc = put_i32(&m->value_offsets, m->values.len)) != BM_OK) return rc;
    if (m->entries == INT32_MAX) return BM_ERR_DATA;
    m->entries++;
    return BM_OK;
}

typedef struct {
    map_col maps[3];      /* primaryKey, before, after */
    bm_buf row_index;     /* int64 per output row */
    Py_ssize_t rows;
} batch;

static int end_row(batch *out, uint64_t row_index, int pk, int before, int after) {
    int64_t ri = (int64_t)row_index;
    if (bm_buf_put(&out->row_index, &ri, sizeof ri) != BM_OK) return BM_ERR_PY;
    int valid[3] = {pk, before, after};
    for (int k = 0; k < 3; k++) {
        int rc = map_end_row(&out->maps[k], out->rows, valid[k]);
        if (rc != BM_OK) return rc;
    }
    out->rows++;
    return BM_OK;
}

/* One serialized BinlogEvent: a row per row change (one row with null maps for an event without rows, and
 * for every event in events mode). */
static int add_event(batch *out, const unsigned char *p, Py_ssize_t n, int events_mode, PyObject *fallback) {
    const unsigned char *end = p + n, *q = p;
    uint64_t event_row_index = 0, operation = 0;
    Py_ssize_t nrows = 0;
    while (q < end) {
        pb_field f;
        if (read_field(&q, end, &f) != BM_OK) return BM_ERR_DATA;
        if (f.number == EV_ROW_INDEX || f.number == EV_OPERATION) {
            if (f.wire != WT_VARINT) return BM_ERR_DATA;
            *(f.number == EV_ROW_INDEX ? &event_row_index : &operation) = f.num;
        } else if (f.number == EV_ROWS) {
            if (f.wire != WT_LEN) return BM_ERR_DATA;
            nrows++;
        }
    }
    if (events_mode || nrows == 0) return end_row(out, event_row_index, 0, 0, 0);
    int before = operation != OP_INSERT, after = operation != OP_DELETE;
    q = p;
    while (q < end) {
        pb_field f;
        if (read_field(&q, end, &f) != BM_OK) return BM_ERR_DATA;
        if (f.number != EV_ROWS) continue;
        const unsigned char *r = f.data, *rend = f.data + f.len;
        uint64_t row_index = 0;
        while (r < rend) {
            pb_field c;
            if (read_field(&r, rend, &c) != BM_OK) return BM_ERR_DATA;
            if (c.number == ROW_INDEX && c.wire == WT_VARINT) {
                row_index = c.num;
            } else if (c.number >= ROW_PK && c.number <= ROW_AFTER && c.wire == WT_LEN) {
                int rc = map_add_column(&out->maps[c.number - ROW_PK], c.data, c.len, fallback);
                if (rc != BM_OK) return rc;
            } else {
                return BM_ERR_DATA;
            }
        }
        int rc = end_row(out, row_index, 1, before, after);
        if (rc != BM_OK) return rc;
    }
    return BM_OK;
}

static PyObject *buf_bytes(const bm_buf *b) {
    return PyBytes_FromStringAndSize((const char *)b->data, b->len);
}

static PyObject *batch_result(batch *out) {
    PyObject *maps = PyTuple_New(3);
    if (!maps) return NULL;
    for (int k = 0; k < 3; k++) {
        map_col *m = &out->maps[k];
        PyObject *valid = m->nulls ? buf_bytes(&m->valid) : (Py_INCREF(Py_None), Py_None);
        PyObject *item = valid ? Py_BuildValue("(NNnNNNN)", valid, buf_bytes(&m->offsets), (Py_ssize_t)m->entries,
                                               buf_bytes(&m->key_offsets), buf_bytes(&m->keys),
                                               buf_bytes(&m->value_offsets), buf_bytes(&m->values))
                               : NULL;
        if (!item) { Py_DECREF(maps); return NULL; }
        PyTuple_SET_ITEM(maps, k, item);
    }
    return Py_BuildValue("(nNN)", out->rows, buf_bytes(&out->row_index), maps);
}

PyObject *bm_py_arrow_maps(PyObject *self, PyObject *args) {
    PyObject *payloads, *fallback;
    int events_mode;
    if (!PyArg_ParseTuple(args, "O!pO:arrow_maps", &PyList_Type, &payloads, &events_mode, &fallback))
        return NULL;
    if (!PyCallable_Check(fallback)) {
        PyErr_SetString(PyExc_TypeError, "arrow_maps: fallback must be callable");
        return NULL;
    }
    batch out;
    bm_buf_init(&out.row_index);
    out.rows = 0;
    int rc = BM_OK, ready = 0;
    for (; ready < 3 && rc == BM_OK; ready++) rc = map_init(&out.maps[ready]);
    for (Py_ssize_t i = 0; rc == BM_OK && i < PyList_GET_SIZE(payloads); i++) {
        PyObject *item = PyList_GET_ITEM(payloads, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "arrow_maps: payloads must be bytes");
            rc = BM_ERR_PY;
            break;
        }
        Py_INCREF(item);      /* the fallback runs Python code: keep the bytes alive */
        rc = add_event(&out, (const unsigned char *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), events_mode,
                       fallback);
        Py_DECREF(item);
    }
    PyObject *result = NULL;
    if (rc == BM_OK) result = batch_result(&out);
    else if (rc == BM_ERR_DATA && !PyErr_Occurred()) { result = Py_None; Py_INCREF(result); }
    for (int k = 0; k < ready; k++) map_free(&out.maps[k]);
    bm_buf_free(&out.row_index);
    return result;
}
