/* Serialized BinlogEvents -> every column of the Spark data source's rows, as Arrow buffers.
 *
 * Why: the data source's rows carry primaryKey/before/after as map<string,string> whose values are the
 * canonical proto3 JSON of each model Value ({"intValue":5}), and the event's fields repeated on each of
 * its rows. Built in Python (upb views, Arrow compute, a list append per field and event) that cost
 * ~10 us per row and ~14 us per event, ten times the row builder itself. Here one pass over the events'
 * wire bytes writes the Arrow buffers of every column directly: no Python object per row, value or event.
 *
 * Exactness: the text of every kind is byte-identical to binlog_model.spark.value_json.value_json (the
 * reference: protobuf's json_format). Kinds whose text is not worth writing in C (FLOAT and the
 * rare GEOMETRY, VECTOR, raw text, JSON diff, an empty Value) call the Python fallback given by the caller
 * with the Value's bytes. Anything a serializer would not write (unknown fields, a repeated oneof, wrong
 * wire types, invalid UTF-8, offsets past 2 GiB) returns None: the caller builds the batch the Python
 * way, which decides. Every length is checked against the buffer; nothing is read outside it.
 */
#include "arrow_columns.h"
#include "json_text.h"
#include "pb_wire.h"
#include "proto_fields.h"

#include <math.h>

/* Field numbers of binlog_model.v1 (proto_fields.h, generated from the descriptor). */
enum {
    EV_TIMESTAMP = PB_BINLOG_EVENT_UTC_TIMESTAMP, EV_SOURCE = PB_BINLOG_EVENT_SOURCE,
    EV_SERVER_UUID = PB_BINLOG_EVENT_SERVER_UUID, EV_TRANSACTION_ID = PB_BINLOG_EVENT_TRANSACTION_ID,
    EV_QUERY_INDEX = PB_BINLOG_EVENT_QUERY_INDEX, EV_ROW_INDEX = PB_BINLOG_EVENT_ROW_INDEX,
    EV_TRACE_INFO = PB_BINLOG_EVENT_TRACE_INFO, EV_DB = PB_BINLOG_EVENT_DB, EV_TABLE = PB_BINLOG_EVENT_TABLE,
    EV_OPERATION = PB_BINLOG_EVENT_OPERATION, EV_ROWS = PB_BINLOG_EVENT_ROWS, EV_POSITION = PB_BINLOG_EVENT_POSITION,
    EV_GTID = PB_BINLOG_EVENT_GTID, EV_STATEMENT = PB_BINLOG_EVENT_STATEMENT,
    EV_EVENT_INDEX = PB_BINLOG_EVENT_EVENT_INDEX, EV_LAST_IN_STATEMENT = PB_BINLOG_EVENT_LAST_IN_STATEMENT,
    EV_SERVER_ID = PB_BINLOG_EVENT_SERVER_ID, EV_GTID_DOMAIN_ID = PB_BINLOG_EVENT_GTID_DOMAIN_ID
};
enum { POS_FILE = PB_BINLOG_POSITION_FILE, POS_OFFSET = PB_BINLOG_POSITION_OFFSET,
       POS_NEXT_OFFSET = PB_BINLOG_POSITION_NEXT_OFFSET, POS_INNER_INDEX = PB_BINLOG_POSITION_INNER_INDEX };
enum { ROW_INDEX = PB_ROW_ROW_INDEX, ROW_PK = PB_ROW_PRIMARY_KEY, ROW_BEFORE = PB_ROW_BEFORE, ROW_AFTER = PB_ROW_AFTER };
enum { COL_NAME = PB_COLUMN_NAME, COL_VALUE = PB_COLUMN_VALUE, COL_INVISIBLE = PB_COLUMN_INVISIBLE };
enum { OP_INSERT = PB_BINLOG_EVENT_OPERATION_INSERT, OP_DELETE = PB_BINLOG_EVENT_OPERATION_DELETE };
/* The row maps are maps[c.number - ROW_PK] for primary_key, before, after. */
_Static_assert(ROW_BEFORE == ROW_PK + 1 && ROW_AFTER == ROW_PK + 2, "Row's images are no longer fields k, k+1, k+2");
/* put_datetime reads Date/DateTime fields 1..n into v[number - 1], named in that order. */
_Static_assert(PB_DATE_YEAR == 1 && PB_DATE_MONTH == 2 && PB_DATE_DAY == 3 && PB_DATE_MAX_FIELD == 3 &&
               PB_DATE_TIME_YEAR == 1 && PB_DATE_TIME_MONTH == 2 && PB_DATE_TIME_DAY == 3 &&
               PB_DATE_TIME_HOUR == 4 && PB_DATE_TIME_MINUTE == 5 && PB_DATE_TIME_SECOND == 6 &&
               PB_DATE_TIME_MICROS == 7 && PB_DATE_TIME_MAX_FIELD == 7,
               "Date/DateTime are no longer fields 1..n in year..micros order: put_datetime must follow");
static int put_str(bm_buf *b, const char *s) { return bm_buf_put(b, s, (Py_ssize_t)strlen(s)); }

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

/* prefix, the number, suffix: {"longValue":"-5"} and the like. */
static int put_number(bm_buf *b, const char *prefix, int negative_ok, uint64_t v, const char *suffix) {
    if (put_str(b, prefix) != BM_OK) return BM_ERR_PY;
    if ((negative_ok ? bm_buf_i64(b, (int64_t)v) : bm_buf_u64(b, v)) != BM_OK) return BM_ERR_PY;
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
            bm_buf_u64(b, v[k]) != BM_OK)
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
        if (read_field(&p, end, &f) != BM_OK || f.number != PB_SET_VALUE_LABELS || f.wire != PB_SET_VALUE_LABELS_WIRE)
            return BM_ERR_DATA;
        if (put_str(b, first ? "\"labels\":[" : ",") != BM_OK) return BM_ERR_PY;
        int rc = bm_put_json_string(b, f.data, f.len);
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
    static const int wire_of[PB_VALUE_MAX_FIELD + 1] = {
        [0] = -1, [PB_VALUE_NULL_VALUE] = PB_VALUE_NULL_VALUE_WIRE, [PB_VALUE_INT_VALUE] = PB_VALUE_INT_VALUE_WIRE,
        [PB_VALUE_LONG_VALUE] = PB_VALUE_LONG_VALUE_WIRE, [PB_VALUE_STRING_VALUE] = PB_VALUE_STRING_VALUE_WIRE,
        [PB_VALUE_BYTES_VALUE] = PB_VALUE_BYTES_VALUE_WIRE, [PB_VALUE_DECIMAL_VALUE] = PB_VALUE_DECIMAL_VALUE_WIRE,
        [PB_VALUE_DOUBLE_VALUE] = PB_VALUE_DOUBLE_VALUE_WIRE, [PB_VALUE_FLOAT_VALUE] = PB_VALUE_FLOAT_VALUE_WIRE,
        [PB_VALUE_DATETIME_VALUE] = PB_VALUE_DATETIME_VALUE_WIRE, [PB_VALUE_DATE_VALUE] = PB_VALUE_DATE_VALUE_WIRE,
        [PB_VALUE_TIMESTAMP_MICROS] = PB_VALUE_TIMESTAMP_MICROS_WIRE,
        [PB_VALUE_TIME_MICROS] = PB_VALUE_TIME_MICROS_WIRE, [PB_VALUE_UINT64_VALUE] = PB_VALUE_UINT64_VALUE_WIRE,
        [PB_VALUE_JSON_VALUE] = PB_VALUE_JSON_VALUE_WIRE, [PB_VALUE_SET_VALUE] = PB_VALUE_SET_VALUE_WIRE,
        [PB_VALUE_BIT_VALUE] = PB_VALUE_BIT_VALUE_WIRE, [PB_VALUE_GEOMETRY_VALUE] = PB_VALUE_GEOMETRY_VALUE_WIRE,
        [PB_VALUE_VECTOR_VALUE] = PB_VALUE_VECTOR_VALUE_WIRE, [PB_VALUE_RAW_TEXT_VALUE] = PB_VALUE_RAW_TEXT_VALUE_WIRE,
        [PB_VALUE_JSON_DIFF] = PB_VALUE_JSON_DIFF_WIRE};
    if (f.number > PB_VALUE_MAX_FIELD || f.wire != wire_of[f.number]) return BM_ERR_DATA;
    int rc;
    switch (f.number) {
    case PB_VALUE_NULL_VALUE: return put_str(b, "{\"nullValue\":null}") == BM_OK ? BM_OK : BM_ERR_PY;
    case PB_VALUE_INT_VALUE:
        return put_number(b, "{\"intValue\":", 1, (uint64_t)(int64_t)(int32_t)(uint32_t)f.num, "}");
    case PB_VALUE_LONG_VALUE: return put_number(b, "{\"longValue\":\"", 1, f.num, "\"}");
    case PB_VALUE_TIMESTAMP_MICROS: return put_number(b, "{\"timestampMicros\":\"", 1, f.num, "\"}");
    case PB_VALUE_TIME_MICROS: return put_number(b, "{\"timeMicros\":\"", 1, f.num, "\"}");
    case PB_VALUE_UINT64_VALUE: return put_number(b, "{\"uint64Value\":\"", 0, f.num, "\"}");
    case PB_VALUE_BIT_VALUE: return put_number(b, "{\"bitValue\":\"", 0, f.num, "\"}");
    case PB_VALUE_STRING_VALUE: case PB_VALUE_DECIMAL_VALUE: case PB_VALUE_JSON_VALUE:
        if (put_str(b, f.number == PB_VALUE_STRING_VALUE ? "{\"stringValue\":"
                       : f.number == PB_VALUE_DECIMAL_VALUE ? "{\"decimalValue\":" : "{\"jsonValue\":") != BM_OK)
            return BM_ERR_PY;
        rc = bm_put_json_string(b, f.data, f.len);
        if (rc != BM_OK) return rc;
        return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
    case PB_VALUE_BYTES_VALUE:
        if (put_str(b, "{\"bytesValue\":\"") != BM_OK) return BM_ERR_PY;
        rc = put_base64(b, f.data, f.len);
        if (rc != BM_OK) return rc;
        return put_str(b, "\"}") == BM_OK ? BM_OK : BM_ERR_PY;
    case PB_VALUE_DOUBLE_VALUE: {
        uint64_t bits = 0;
        for (int k = 7; k >= 0; k--) bits = bits << 8 | f.data[k];
        double v;
        memcpy(&v, &bits, sizeof v);
        if (put_str(b, "{\"doubleValue\":") != BM_OK) return BM_ERR_PY;
        rc = put_double(b, v);
        if (rc != BM_OK) return rc;
        return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
    }
    case PB_VALUE_DATETIME_VALUE:
        return put_datetime(b, "{\"datetimeValue\":{", f.data, f.len, PB_DATE_TIME_MAX_FIELD);
    case PB_VALUE_DATE_VALUE: return put_datetime(b, "{\"dateValue\":{", f.data, f.len, PB_DATE_MAX_FIELD);
    case PB_VALUE_SET_VALUE: return put_set(b, f.data, f.len);
    default:        /* FLOAT (shortest float32 text), geometry, vector, raw text, JSON diff: the rare kinds */
        return put_fallback(b, fallback, p, n);
    }
}

int bm_value_json(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    return put_value(b, p, n, fallback);
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
    if (!bm_utf8_valid(name, name_len)) return BM_ERR_DATA;
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

/* A string or binary column: validity bits, int32 offsets, data. */
typedef struct {
    bm_buf valid, offsets, data;
    Py_ssize_t nulls;
} str_col;

/* A fixed-width column (int32, int64) or a bool column (bits in data): validity bits and values. */
typedef struct {
    bm_buf valid, data;
    Py_ssize_t nulls;
} fixed_col;

/* Bits row0 .. row0 + n - 1 of a bitmap (its bytes so far cover exactly the rows before row0), all set
 * or all clear. */
static int set_bits(bm_buf *bits, Py_ssize_t row0, Py_ssize_t n, int set) {
    Py_ssize_t need = (row0 + n + 7) / 8;
    if (need > bits->len) {
        if (bm_buf_reserve(bits, need - bits->len) != BM_OK) return BM_ERR_PY;
        memset(bits->data + bits->len, 0, (size_t)(need - bits->len));
        bits->len = need;
    }
    if (set)
        for (Py_ssize_t r = row0; r < row0 + n; r++) bits->data[r / 8] |= (unsigned char)(1u << (r % 8));
    return BM_OK;
}

static int str_init(str_col *c) {
    bm_buf_init(&c->valid); bm_buf_init(&c->offsets); bm_buf_init(&c->data);
    c->nulls = 0;
    return put_i32(&c->offsets, 0);
}

static void str_free(str_col *c) { bm_buf_free(&c->valid); bm_buf_free(&c->offsets); bm_buf_free(&c->data); }

static void fixed_init(fixed_col *c) { bm_buf_init(&c->valid); bm_buf_init(&c->data); c->nulls = 0; }

static void fixed_free(fixed_col *c) { bm_buf_free(&c->valid); bm_buf_free(&c->data); }

/* The columns, in ARROW_SCHEMA's order where they are plain (the maps and orderKey's parts apart). */
enum { S_SOURCE, S_SERVER_UUID, S_FILE, S_DB, S_TABLE, S_OPERATION, S_GTID, S_STATEMENT, S_TRACE_INFO, S_EVENT,
       N_STR };
static const char *str_names[N_STR] = {"source", "serverUuid", "file", "db", "table", "operation", "gtid",
                                       "statement", "traceInfo", "event"};
enum { F_TRANSACTION_ID, F_QUERY_INDEX, F_EVENT_INDEX, F_ROW_INDEX, F_LAST_IN_STATEMENT, F_OFFSET,
       F_NEXT_OFFSET, F_INNER_INDEX, F_UTC_TIMESTAMP, F_GTID_DOMAIN_ID, F_SERVER_ID, F_FILE_SEQ, F_ORDER_INNER,
       N_FIXED };
static const char *fixed_names[N_FIXED] = {"transactionId", "queryIndex", "eventIndex", "rowIndex",
                                           "lastInStatement", "offset", "nextOffset", "innerIndex",
                                           "utcTimestamp", "gtidDomainId", "serverId", "fileSeq", "orderInner"};

typedef struct {
    map_col maps[3];      /* primaryKey, before, after */
    str_col strs[N_STR];
    fixed_col fixed[N_FIXED];
    Py_ssize_t rows;
    PyObject *file_seq;   /* Python's file_sequence, for the names C does not read itself */
    const unsigned char *seq_name;   /* the last file name and its sequence (consecutive events share it) */
    Py_ssize_t seq_len;
    int64_t seq;
} batch;

typedef struct { const unsigned char *p; Py_ssize_t n; } span;

/* One event's fields (proto3 defaults when absent; has_* for the optional ones). */
typedef struct {
    span source, server_uuid, trace_info, db, table, gtid, statement, file;
    int has_trace_info, has_statement, has_inner_index, last_in_statement;
    uint64_t transaction_id, row_index, offset, next_offset;
    uint32_t query_index, event_index, server_id, gtid_domain_id, inner_index;
    int32_t operation, nanos;
    int64_t seconds;
    Py_ssize_t nrows;
} event_fields;

static const char *operation_names[] = {"OPERATION_UNSPECIFIED", "INSERT", "UPDATE", "DELETE", "SCHEMA"};

static int read_string(const pb_field *f, span *out) {
    if (f->wire != WT_LEN || !bm_utf8_valid(f->data, f->len)) return BM_ERR_DATA;
    out->p = f->data;
    out->n = f->len;
    return BM_OK;
}

/* Timestamp and BinlogPosition: a repeated occurrence merges field by field, as protobuf does. */
static int read_timestamp(const pb_field *f, event_fields *ev) {
    const unsigned char *p = f->data, *end = f->data + f->len;
    while (p < end) {
        pb_field g;
        if (read_field(&p, end, &g) != BM_OK) return BM_ERR_DATA;
        if (g.number == PB_TIMESTAMP_SECONDS || g.number == PB_TIMESTAMP_NANOS) {
            if (g.wire != WT_VARINT) return BM_ERR_DATA;
            if (g.number == PB_TIMESTAMP_SECONDS) ev->seconds = (int64_t)g.num;
            else ev->nanos = (int32_t)(uint32_t)g.num;
        }
    }
    return BM_OK;
}

static int read_position(const pb_field *f, event_fields *ev) {
    const unsigned char *p = f->data, *end = f->data + f->len;
    while (p < end) {
        pb_field g;
        if (read_field(&p, end, &g) != BM_OK) return BM_ERR_DATA;
        switch (g.number) {
        case POS_FILE: if (read_string(&g, &ev->file) != BM_OK) return BM_ERR_DATA; break;
        case POS_OFFSET: case POS_NEXT_OFFSET: case POS_INNER_INDEX:
            if (g.wire != WT_VARINT) return BM_ERR_DATA;
            if (g.number == POS_OFFSET) ev->offset = g.num;
            else if (g.number == POS_NEXT_OFFSET) ev->next_offset = g.num;
            else { ev->inner_index = (uint32_t)g.num; ev->has_inner_index = 1; }
            break;
        default: break;       /* an unknown field: protobuf keeps it aside */
        }
    }
    return BM_OK;
}

static int read_event(const unsigned char *p, Py_ssize_t n, event_fields *ev) {
    static const span empty = {(const unsigned char *)"", 0};
    memset(ev, 0, sizeof *ev);
    ev->source = ev->server_uuid = ev->trace_info = ev->db = ev->table = ev->gtid = ev->statement = ev->file = empty;
    const unsigned char *end = p + n;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK) return BM_ERR_DATA;
        int rc = BM_OK;
        switch (f.number) {
        case EV_TIMESTAMP: rc = f.wire == WT_LEN ? read_timestamp(&f, ev) : BM_ERR_DATA; break;
        case EV_POSITION: rc = f.wire == WT_LEN ? read_position(&f, ev) : BM_ERR_DATA; break;
        case EV_SOURCE: rc = read_string(&f, &ev->source); break;
        case EV_SERVER_UUID: rc = read_string(&f, &ev->server_uuid); break;
        case EV_DB: rc = read_string(&f, &ev->db); break;
        case EV_TABLE: rc = read_string(&f, &ev->table); break;
        case EV_GTID: rc = read_string(&f, &ev->gtid); break;
        case EV_TRACE_INFO: rc = read_string(&f, &ev->trace_info); ev->has_trace_info = 1; break;
        case EV_STATEMENT: rc = read_string(&f, &ev->statement); ev->has_statement = 1; break;
        case EV_ROWS: rc = f.wire == WT_LEN ? BM_OK : BM_ERR_DATA; ev->nrows++; break;
        case EV_TRANSACTION_ID: case EV_QUERY_INDEX: case EV_ROW_INDEX: case EV_OPERATION: case EV_EVENT_INDEX:
        case EV_LAST_IN_STATEMENT: case EV_SERVER_ID: case EV_GTID_DOMAIN_ID:
            if (f.wire != WT_VARINT) return BM_ERR_DATA;
            switch (f.number) {
            case EV_TRANSACTION_ID: ev->transaction_id = f.num; break;
            case EV_QUERY_INDEX: ev->query_index = (uint32_t)f.num; break;
            case EV_ROW_INDEX: ev->row_index = f.num; break;
            case EV_OPERATION: ev->operation = (int32_t)(uint32_t)f.num; break;
            case EV_EVENT_INDEX: ev->event_index = (uint32_t)f.num; break;
            case EV_LAST_IN_STATEMENT: ev->last_in_statement = f.num != 0; break;
            case EV_SERVER_ID: ev->server_id = (uint32_t)f.num; break;
            default: ev->gtid_domain_id = (uint32_t)f.num; break;
            }
            break;
        default: break;       /* schema_changes, statement_raw, unknown fields: not columns */
        }
        if (rc != BM_OK) return rc;
    }
    if (ev->operation < 0 || ev->operation > PB_BINLOG_EVENT_OPERATION_MAX) return BM_ERR_DATA;   /* no name */
    return BM_OK;
}

/* file_sequence(name): the number after the name's last '.', -1 without one. Names with bytes where
 * Python's regex differs from ASCII digits (non-ASCII, a newline) or too many digits go to Python. */
static int file_sequence(batch *out, span name, int64_t *seq) {
    if (out->seq_name && out->seq_len == name.n && memcmp(out->seq_name, name.p, (size_t)name.n) == 0) {
        *seq = out->seq;
        return BM_OK;
    }
    Py_ssize_t base = 0, dot = -1;
    int simple = 1;
    for (Py_ssize_t i = 0; i < name.n; i++) {
        unsigned char c = name.p[i];
        if (c == '/') { base = i + 1; dot = -1; }
        else if (c == '.') dot = i;
        else if (c >= 0x80 || c == '\n') simple = 0;
    }
    int64_t v = -1;
    if (simple && dot >= base && name.n - dot - 1 >= 1 && name.n - dot - 1 <= 18) {
        v = 0;
        for (Py_ssize_t i = dot + 1; i < name.n && v >= 0; i++) {
            if (name.p[i] < '0' || name.p[i] > '9') v = -1;
            else v = v * 10 + (name.p[i] - '0');
        }
    } else if (!simple || (dot >= base && name.n - dot - 1 > 18)) {
        PyObject *r = PyObject_CallFunction(out->file_seq, "s#", (const char *)name.p, name.n);
        if (!r) return BM_ERR_PY;
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(r, &overflow);
        Py_DECREF(r);
        if (x == -1 && PyErr_Occurred()) return BM_ERR_PY;
        if (overflow) return BM_ERR_DATA;       /* past int64: pa.array raises, Python decides */
        v = x;
    }
    out->seq_name = name.p;
    out->seq_len = name.n;
    out->seq = v;
    *seq = v;
    return BM_OK;
}

/* utcTimestamp: seconds * 1,000,000 + floor(nanos / 1000), as Python computes it; past int64 -> Python. */
static int utc_micros(const event_fields *ev, int64_t *out) {
    int64_t sub = ev->nanos / 1000;
    if (ev->nanos % 1000 < 0) sub -= 1;
    if (ev->seconds > (INT64_MAX - 1000000) / 1000000 || ev->seconds < (INT64_MIN + 1000000) / 1000000)
        return BM_ERR_DATA;
    *out = ev->seconds * 1000000 + sub;
    return BM_OK;
}

/* n copies of one string value (or n nulls when p is NULL) from row row0 on. */
static int str_fill(str_col *c, Py_ssize_t row0, Py_ssize_t n, const unsigned char *p, Py_ssize_t len) {
    if (n <= 0) return BM_OK;
    if (set_bits(&c->valid, row0, n, p != NULL) != BM_OK) return BM_ERR_PY;
    if (!p) { c->nulls += n; len = 0; }
    if (len && n > (PY_SSIZE_T_MAX - c->data.len) / len) return BM_ERR_DATA;
    if (c->data.len + n * len > INT32_MAX) return BM_ERR_DATA;   /* past 2 GiB: the Python path decides */
    if (bm_buf_reserve(&c->data, n * len) != BM_OK || bm_buf_reserve(&c->offsets, n * 4) != BM_OK)
        return BM_ERR_PY;
    int32_t *off = (int32_t *)(void *)(c->offsets.data + c->offsets.len);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (len) memcpy(c->data.data + c->data.len, p, (size_t)len);
        c->data.len += len;
        off[i] = (int32_t)c->data.len;
    }
    c->offsets.len += n * 4;
    return BM_OK;
}

/* n copies of one int32 / int64 value (or n nulls) from row row0 on. */
static int fixed_fill(fixed_col *c, Py_ssize_t row0, Py_ssize_t n, int is_valid, int64_t v, int width) {
    if (n <= 0) return BM_OK;
    if (width == 4 && (v > INT32_MAX || v < INT32_MIN)) return BM_ERR_DATA;   /* pa.array raises: Python */
    if (set_bits(&c->valid, row0, n, is_valid) != BM_OK || bm_buf_reserve(&c->data, n * width) != BM_OK)
        return BM_ERR_PY;
    if (!is_valid) { c->nulls += n; v = 0; }
    unsigned char *d = c->data.data + c->data.len;
    int32_t v32 = (int32_t)v;
    for (Py_ssize_t i = 0; i < n; i++) memcpy(d + i * width, width == 4 ? (const void *)&v32 : (const void *)&v,
                                              (size_t)width);
    c->data.len += n * width;
    return BM_OK;
}

/* The event's own columns for its n output rows from row0 on (rowIndex is written per row elsewhere); the
 * statement and the event bytes on the first row only. */
static int event_rows(batch *out, const event_fields *ev, const unsigned char *payload, Py_ssize_t size,
                      Py_ssize_t row0, Py_ssize_t n, int64_t seq, int64_t micros) {
    const char *op = operation_names[ev->operation];
    const span plain[] = {ev->source, ev->server_uuid, ev->file, ev->db, ev->table,
                          {(const unsigned char *)op, (Py_ssize_t)strlen(op)}, ev->gtid};
    int rc;
    for (int k = S_SOURCE; k <= S_GTID; k++)
        if ((rc = str_fill(&out->strs[k], row0, n, plain[k].p, plain[k].n)) != BM_OK) return rc;
    if ((rc = str_fill(&out->strs[S_STATEMENT], row0, 1, ev->has_statement ? ev->statement.p : NULL,
                       ev->statement.n)) != BM_OK ||
        (rc = str_fill(&out->strs[S_STATEMENT], row0 + 1, n - 1, NULL, 0)) != BM_OK ||
        (rc = str_fill(&out->strs[S_TRACE_INFO], row0, n, ev->has_trace_info ? ev->trace_info.p : NULL,
                       ev->trace_info.n)) != BM_OK ||
        (rc = str_fill(&out->strs[S_EVENT], row0, 1, payload, size)) != BM_OK ||
        (rc = str_fill(&out->strs[S_EVENT], row0 + 1, n - 1, NULL, 0)) != BM_OK)
        return rc;
    if (ev->transaction_id > INT64_MAX || ev->offset > INT64_MAX || ev->next_offset > INT64_MAX)
        return BM_ERR_DATA;       /* the int64 columns cannot hold them: Python raises */
    fixed_col *f = out->fixed;
    if ((rc = fixed_fill(&f[F_TRANSACTION_ID], row0, n, 1, (int64_t)ev->transaction_id, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_QUERY_INDEX], row0, n, 1, ev->query_index, 4)) != BM_OK ||
        (rc = fixed_fill(&f[F_EVENT_INDEX], row0, n, 1, ev->event_index, 4)) != BM_OK ||
        (rc = fixed_fill(&f[F_OFFSET], row0, n, 1, (int64_t)ev->offset, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_NEXT_OFFSET], row0, n, 1, (int64_t)ev->next_offset, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_INNER_INDEX], row0, n, ev->has_inner_index, ev->inner_index, 4)) != BM_OK ||
        (rc = fixed_fill(&f[F_UTC_TIMESTAMP], row0, n, 1, micros, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_GTID_DOMAIN_ID], row0, n, 1, ev->gtid_domain_id, 4)) != BM_OK ||
        (rc = fixed_fill(&f[F_SERVER_ID], row0, n, 1, ev->server_id, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_FILE_SEQ], row0, n, 1, seq, 8)) != BM_OK ||
        (rc = fixed_fill(&f[F_ORDER_INNER], row0, n, 1, ev->has_inner_index ? (int64_t)ev->inner_index : -1, 4))
            != BM_OK)
        return rc;
    /* lastInStatement: a bool column, its values bits too. */
    if (set_bits(&f[F_LAST_IN_STATEMENT].valid, row0, n, 1) != BM_OK ||
        set_bits(&f[F_LAST_IN_STATEMENT].data, row0, n, ev->last_in_statement) != BM_OK)
        return BM_ERR_PY;
    return BM_OK;
}

/* rowIndex of one output row. */
static int put_row_index(batch *out, uint64_t row_index) {
    if (row_index > INT64_MAX) return BM_ERR_DATA;    /* the int64 column cannot hold it: Python raises */
    fixed_col *c = &out->fixed[F_ROW_INDEX];
    if (set_bits(&c->valid, out->rows, 1, 1) != BM_OK) return BM_ERR_PY;
    int64_t v = (int64_t)row_index;
    return bm_buf_put(&c->data, &v, sizeof v) == BM_OK ? BM_OK : BM_ERR_PY;
}

static int end_row(batch *out, int pk, int before, int after) {
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
    event_fields ev;
    int64_t seq, micros;
    int rc;
    if ((rc = read_event(p, n, &ev)) != BM_OK || (rc = file_sequence(out, ev.file, &seq)) != BM_OK ||
        (rc = utc_micros(&ev, &micros)) != BM_OK)
        return rc;
    Py_ssize_t row0 = out->rows;
    if (events_mode || ev.nrows == 0) {
        if ((rc = put_row_index(out, ev.row_index)) != BM_OK || (rc = end_row(out, 0, 0, 0)) != BM_OK)
            return rc;
        return event_rows(out, &ev, p, n, row0, 1, seq, micros);
    }
    int before = ev.operation != OP_INSERT, after = ev.operation != OP_DELETE;
    const unsigned char *q = p, *end = p + n;
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
                if ((rc = map_add_column(&out->maps[c.number - ROW_PK], c.data, c.len, fallback)) != BM_OK)
                    return rc;
            } else {
                return BM_ERR_DATA;
            }
        }
        if ((rc = put_row_index(out, row_index)) != BM_OK || (rc = end_row(out, 1, before, after)) != BM_OK)
            return rc;
    }
    return event_rows(out, &ev, p, n, row0, out->rows - row0, seq, micros);
}

/* A read-only buffer that owns a bm_buf's memory: the columns go to Arrow (pa.py_buffer) without a copy. */
typedef struct {
    PyObject_HEAD
    unsigned char *data;
    Py_ssize_t len;
} blob;

static void blob_dealloc(blob *self) {
    PyMem_Free(self->data);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int blob_getbuffer(blob *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->data ? self->data : (unsigned char *)"", self->len, 1,
                             flags);
}

static PyBufferProcs blob_as_buffer = {(getbufferproc)blob_getbuffer, NULL};

static PyTypeObject BlobType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "binlog_model._speedups.Blob",
    .tp_basicsize = sizeof(blob),
    .tp_dealloc = (destructor)blob_dealloc,
    .tp_as_buffer = &blob_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Bytes built by arrow_columns, exposed through the buffer protocol (read-only).",
};

int bm_arrow_columns_ready(void) { return PyType_Ready(&BlobType); }

PyObject *bm_blob_from_buf(bm_buf *b) {
    blob *out = PyObject_New(blob, &BlobType);
    if (!out) return NULL;
    if (b->cap > b->len + 4096) {       /* give back what the growth over-reserved */
        unsigned char *shrunk = PyMem_Realloc(b->data, (size_t)(b->len ? b->len : 1));
        if (shrunk) b->data = shrunk;
    }
    out->data = b->data;
    out->len = b->len;
    bm_buf_init(b);
    return (PyObject *)out;
}

static PyObject *validity(bm_buf *valid, Py_ssize_t nulls) {
    if (nulls) return bm_blob_from_buf(valid);
    Py_RETURN_NONE;
}

/* {name: buffers}: strings (validity | None, offsets, data), fixed (validity | None, data), the maps
 * (validity | None, offsets, entries, key_offsets, keys, value_offsets, values). */
static PyObject *batch_result(batch *out) {
    PyObject *columns = PyDict_New();
    if (!columns) return NULL;
    static const char *map_names[3] = {"primaryKey", "before", "after"};
    for (int k = 0; k < 3; k++) {
        map_col *m = &out->maps[k];
        PyObject *item = Py_BuildValue("(NNnNNNN)", validity(&m->valid, m->nulls), bm_blob_from_buf(&m->offsets),
                                       (Py_ssize_t)m->entries, bm_blob_from_buf(&m->key_offsets), bm_blob_from_buf(&m->keys),
                                       bm_blob_from_buf(&m->value_offsets), bm_blob_from_buf(&m->values));
        if (!item || PyDict_SetItemString(columns, map_names[k], item) < 0) goto fail_item;
        Py_DECREF(item);
        continue;
    fail_item:
        Py_XDECREF(item);
        Py_DECREF(columns);
        return NULL;
    }
    for (int k = 0; k < N_STR; k++) {
        str_col *c = &out->strs[k];
        PyObject *item = Py_BuildValue("(NNN)", validity(&c->valid, c->nulls), bm_blob_from_buf(&c->offsets),
                                       bm_blob_from_buf(&c->data));
        if (!item || PyDict_SetItemString(columns, str_names[k], item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(columns);
            return NULL;
        }
        Py_DECREF(item);
    }
    for (int k = 0; k < N_FIXED; k++) {
        fixed_col *c = &out->fixed[k];
        PyObject *item = Py_BuildValue("(NN)", validity(&c->valid, c->nulls), bm_blob_from_buf(&c->data));
        if (!item || PyDict_SetItemString(columns, fixed_names[k], item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(columns);
            return NULL;
        }
        Py_DECREF(item);
    }
    return Py_BuildValue("(nN)", out->rows, columns);
}

PyObject *bm_py_arrow_columns(PyObject *self, PyObject *args) {
    PyObject *payloads, *fallback, *file_seq;
    int events_mode;
    if (!PyArg_ParseTuple(args, "O!pOO:arrow_columns", &PyList_Type, &payloads, &events_mode, &fallback,
                          &file_seq))
        return NULL;
    if (!PyCallable_Check(fallback) || !PyCallable_Check(file_seq)) {
        PyErr_SetString(PyExc_TypeError, "arrow_columns: fallback and file_seq must be callable");
        return NULL;
    }
    /* The payloads are copied into a tuple first: the Python callbacks cannot change what is read. */
    PyObject *items = PySequence_Tuple(payloads);
    if (!items) return NULL;
    batch out;
    memset(&out, 0, sizeof out);
    out.file_seq = file_seq;
    int rc = BM_OK, maps_ready = 0;
    for (int k = 0; k < N_STR && rc == BM_OK; k++) rc = str_init(&out.strs[k]);
    for (int k = 0; k < N_FIXED; k++) fixed_init(&out.fixed[k]);
    for (; maps_ready < 3 && rc == BM_OK; maps_ready++) rc = map_init(&out.maps[maps_ready]);
    /* Room up front, from the input's size (the event column holds each payload once; the maps' text is
     * of the order of the input): growth by doubling would copy the large columns and touch twice their
     * pages; the export gives back what is left unused. */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (PyBytes_Check(PyTuple_GET_ITEM(items, i))) total += PyBytes_GET_SIZE(PyTuple_GET_ITEM(items, i));
    if (rc == BM_OK && total < (PY_SSIZE_T_MAX >> 3)) {
        for (int k = 0; k < 3 && rc == BM_OK; k++)
            if (bm_buf_reserve(&out.maps[k].values, total / 2) != BM_OK ||
                bm_buf_reserve(&out.maps[k].keys, total / 8) != BM_OK)
                rc = BM_ERR_PY;
        if (rc == BM_OK && bm_buf_reserve(&out.strs[S_EVENT].data, total) != BM_OK) rc = BM_ERR_PY;
    }
    for (Py_ssize_t i = 0; rc == BM_OK && i < PyTuple_GET_SIZE(items); i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "arrow_columns: payloads must be bytes");
            rc = BM_ERR_PY;
            break;
        }
        rc = add_event(&out, (const unsigned char *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), events_mode,
                       fallback);
    }
    PyObject *result = NULL;
    if (rc == BM_OK) result = batch_result(&out);
    else if (rc == BM_ERR_DATA && !PyErr_Occurred()) { result = Py_None; Py_INCREF(result); }
    for (int k = 0; k < maps_ready; k++) map_free(&out.maps[k]);
    for (int k = 0; k < N_STR; k++) str_free(&out.strs[k]);
    for (int k = 0; k < N_FIXED; k++) fixed_free(&out.fixed[k]);
    Py_DECREF(items);
    return result;
}
