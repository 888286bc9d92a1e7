/* A serialized BinlogEvent -> its JSON line (``--format jsonl``, typed values, no defaults).
 *
 * Why: the JSON lines sink built each line with protobuf's json_format (a descriptor walk in Python per
 * field and value), ~90% of an ``events --format jsonl`` run; a schema-specialised walk in Python over the
 * messages (binlog_model/json_encoder.py) still pays ~1 us per attribute read through upb. Here one pass
 * over the event's wire bytes writes the line: no message and no Python object per row or value.
 *
 * Exactness: the bytes are json.dumps(MessageToDict(event), ensure_ascii=False, separators=(",", ":"))
 * plus "\n" (binlog_model.messages.to_json with reference=True). Fields come out in field-number order,
 * which is the wire order of what a serializer writes; implicit-presence fields at zero are left out,
 * optional ones (trace_info, statement, inner_index) kept when present; 64-bit integers as strings; the
 * Timestamp as RFC 3339 with 0, 3, 6 or 9 fractional digits. Each Value is bm_value_json's text (the
 * Spark source's, tested against the same reference; FLOAT and the rare kinds go to the Python fallback).
 * Anything else returns BM_ERR_DATA and the caller uses the Python path for the event, which decides:
 * fields out of order or repeated where a serializer writes them once, unknown fields, wrong wire types,
 * numbers a field cannot hold, an operation without a name, an invalid Timestamp (json_format raises),
 * invalid UTF-8, and the messages rare in a binlog (schema_changes, statement_raw). Every length is
 * checked against the buffer; nothing is read outside it.
 */
#include "jsonl_event.h"
#include "arrow_columns.h"
#include "json_text.h"
#include "pb_wire.h"
#include "proto_fields.h"

enum {
    EV_TIMESTAMP = PB_BINLOG_EVENT_UTC_TIMESTAMP, EV_SOURCE = PB_BINLOG_EVENT_SOURCE,
    EV_SERVER_UUID = PB_BINLOG_EVENT_SERVER_UUID, EV_TRANSACTION_ID = PB_BINLOG_EVENT_TRANSACTION_ID,
    EV_QUERY_INDEX = PB_BINLOG_EVENT_QUERY_INDEX, EV_ROW_INDEX = PB_BINLOG_EVENT_ROW_INDEX,
    EV_TRACE_INFO = PB_BINLOG_EVENT_TRACE_INFO, EV_DB = PB_BINLOG_EVENT_DB, EV_TABLE = PB_BINLOG_EVENT_TABLE,
    EV_OPERATION = PB_BINLOG_EVENT_OPERATION, EV_ROWS = PB_BINLOG_EVENT_ROWS,
    EV_POSITION = PB_BINLOG_EVENT_POSITION, EV_GTID = PB_BINLOG_EVENT_GTID,
    EV_STATEMENT = PB_BINLOG_EVENT_STATEMENT, EV_EVENT_INDEX = PB_BINLOG_EVENT_EVENT_INDEX,
    EV_LAST_IN_STATEMENT = PB_BINLOG_EVENT_LAST_IN_STATEMENT, EV_SERVER_ID = PB_BINLOG_EVENT_SERVER_ID,
    EV_GTID_DOMAIN_ID = PB_BINLOG_EVENT_GTID_DOMAIN_ID
};
_Static_assert(PB_BINLOG_EVENT_MAX_FIELD == 20 && PB_BINLOG_EVENT_STATEMENT_RAW == 20 &&
               PB_BINLOG_EVENT_SCHEMA_CHANGES == 12,
               "BinlogEvent has fields this encoder does not know: add them (and to json_encoder.py)");
_Static_assert(PB_BINLOG_POSITION_MAX_FIELD == 4 && PB_ROW_MAX_FIELD == 4 && PB_COLUMN_MAX_FIELD == 3 &&
               PB_TIMESTAMP_MAX_FIELD == 2,
               "BinlogPosition, Row, Column or Timestamp changed: this encoder must follow");

static inline int put_lit(bm_buf *b, const char *s) {
    return bm_buf_put(b, s, (Py_ssize_t)strlen(s)) == BM_OK ? BM_OK : BM_ERR_PY;
}

/* ,"name": (the comma from the second key on). */
static inline int put_key(bm_buf *b, int *first, const char *quoted_name_colon) {
    if (!*first && bm_buf_byte(b, ',') != BM_OK) return BM_ERR_PY;
    *first = 0;
    return put_lit(b, quoted_name_colon);
}

static int put_quoted_u64(bm_buf *b, uint64_t v) {
    if (bm_buf_byte(b, '"') != BM_OK || bm_buf_u64(b, v) != BM_OK || bm_buf_byte(b, '"') != BM_OK)
        return BM_ERR_PY;
    return BM_OK;
}

/* The next field of a message whose fields come in increasing order of number, none above `max`. */
static int next_field(const unsigned char **p, const unsigned char *end, uint32_t *last, uint32_t max,
                      pb_field *f) {
    if (read_field(p, end, f) != BM_OK || f->number <= *last || f->number > max) return BM_ERR_DATA;
    *last = f->number;
    return BM_OK;
}

/* A string field as "key":"…"; an empty one is left out unless `always` (an optional field set to ""). */
static inline int put_string_field(bm_buf *b, int *first, const char *key, const pb_field *f,
                                   int always) {
    int rc;
    if (f->wire != WT_LEN) return BM_ERR_DATA;
    if (!f->len && !always) return BM_OK;
    if ((rc = put_key(b, first, key)) != BM_OK) return rc;
    return bm_put_json_string(b, f->data, f->len);
}

/* A 64-bit integer field, quoted as proto3 JSON writes it; zero is left out. */
static int put_u64_field(bm_buf *b, int *first, const char *key, const pb_field *f) {
    int rc;
    if (f->wire != WT_VARINT) return BM_ERR_DATA;
    if (!f->num) return BM_OK;
    if ((rc = put_key(b, first, key)) != BM_OK) return rc;
    return put_quoted_u64(b, f->num);
}

static int put_digits(bm_buf *b, uint32_t v, int width) {
    char tmp[10];
    for (int k = width - 1; k >= 0; k--) { tmp[k] = (char)('0' + v % 10); v /= 10; }
    return bm_buf_put(b, tmp, width) == BM_OK ? BM_OK : BM_ERR_PY;
}

/* Timestamp.ToJsonString: "YYYY-MM-DDThh:mm:ss[.fff|.ffffff|.fffffffff]Z" (the days from 1970-01-01 to a
 * civil date: H. Hinnant's days_from_civil inverse, exact for the whole proleptic Gregorian range). */
static int put_timestamp(bm_buf *b, const unsigned char *p, Py_ssize_t n) {
    const unsigned char *end = p + n;
    int64_t seconds = 0;
    int64_t nanos = 0;
    uint32_t last = 0;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.wire != WT_VARINT || f.number <= last ||
            f.number > PB_TIMESTAMP_MAX_FIELD)
            return BM_ERR_DATA;
        last = f.number;
        if (f.number == PB_TIMESTAMP_SECONDS) seconds = (int64_t)f.num;
        else {
            if ((int64_t)f.num != (int64_t)(int32_t)(uint32_t)f.num) return BM_ERR_DATA;   /* not an int32 */
            nanos = (int64_t)f.num;
        }
    }
    if (seconds < -62135596800LL || seconds > 253402300799LL || nanos < 0 || nanos > 999999999)
        return BM_ERR_DATA;                 /* json_format raises: the Python path raises the same */
    int64_t days = seconds / 86400, secs = seconds % 86400;
    if (secs < 0) { secs += 86400; days -= 1; }
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    if (m <= 2) y += 1;
    if (bm_buf_byte(b, '"') != BM_OK || put_digits(b, (uint32_t)y, 4) != BM_OK || bm_buf_byte(b, '-') != BM_OK ||
        put_digits(b, (uint32_t)m, 2) != BM_OK || bm_buf_byte(b, '-') != BM_OK ||
        put_digits(b, (uint32_t)d, 2) != BM_OK || bm_buf_byte(b, 'T') != BM_OK ||
        put_digits(b, (uint32_t)(secs / 3600), 2) != BM_OK || bm_buf_byte(b, ':') != BM_OK ||
        put_digits(b, (uint32_t)(secs / 60 % 60), 2) != BM_OK || bm_buf_byte(b, ':') != BM_OK ||
        put_digits(b, (uint32_t)(secs % 60), 2) != BM_OK)
        return BM_ERR_PY;
    if (nanos) {
        int rc = bm_buf_byte(b, '.') != BM_OK ? BM_ERR_PY
                 : nanos % 1000000 == 0 ? put_digits(b, (uint32_t)(nanos / 1000000), 3)
                 : nanos % 1000 == 0 ? put_digits(b, (uint32_t)(nanos / 1000), 6)
                 : put_digits(b, (uint32_t)nanos, 9);
        if (rc != BM_OK) return rc;
    }
    return put_lit(b, "Z\"");
}

static int put_position(bm_buf *b, const unsigned char *p, Py_ssize_t n) {
    const unsigned char *end = p + n;
    uint32_t last = 0;
    int first = 1, rc;
    if (bm_buf_byte(b, '{') != BM_OK) return BM_ERR_PY;
    while (p < end) {
        pb_field f;
        if (next_field(&p, end, &last, PB_BINLOG_POSITION_MAX_FIELD, &f) != BM_OK) return BM_ERR_DATA;
        switch (f.number) {
        case PB_BINLOG_POSITION_FILE:
            if ((rc = put_string_field(b, &first, "\"file\":", &f, 0)) != BM_OK) return rc;
            break;
        case PB_BINLOG_POSITION_OFFSET: case PB_BINLOG_POSITION_NEXT_OFFSET:
            if ((rc = put_u64_field(b, &first, f.number == PB_BINLOG_POSITION_OFFSET ? "\"offset\":"
                                                                                       : "\"nextOffset\":",
                                    &f)) != BM_OK)
                return rc;
            break;
        default:    /* inner_index: optional uint32, kept at 0 */
            if (f.wire != WT_VARINT || f.num > 0xFFFFFFFFu) return BM_ERR_DATA;
            if ((rc = put_key(b, &first, "\"innerIndex\":")) != BM_OK) return rc;
            if (bm_buf_u64(b, f.num) != BM_OK) return BM_ERR_PY;
        }
    }
    return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
}

static int put_column(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    const unsigned char *end = p + n;
    uint32_t last = 0;
    int first = 1, rc;
    if (bm_buf_byte(b, '{') != BM_OK) return BM_ERR_PY;
    while (p < end) {
        pb_field f;
        if (next_field(&p, end, &last, PB_COLUMN_MAX_FIELD, &f) != BM_OK) return BM_ERR_DATA;
        switch (f.number) {
        case PB_COLUMN_NAME:
            if ((rc = put_string_field(b, &first, "\"name\":", &f, 0)) != BM_OK) return rc;
            break;
        case PB_COLUMN_VALUE:
            if (f.wire != WT_LEN) return BM_ERR_DATA;
            if ((rc = put_key(b, &first, "\"value\":")) != BM_OK) return rc;
            if ((rc = bm_value_json(b, f.data, f.len, fallback)) != BM_OK) return rc;
            break;
        default:    /* invisible */
            if (f.wire != WT_VARINT) return BM_ERR_DATA;
            if (!f.num) break;
            if ((rc = put_key(b, &first, "\"invisible\":true")) != BM_OK) return rc;
        }
    }
    return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
}

static int put_row(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    static const char *keys[] = {NULL, NULL, "\"primaryKey\":[", "\"before\":[", "\"after\":["};
    _Static_assert(PB_ROW_ROW_INDEX == 1 && PB_ROW_PRIMARY_KEY == 2 && PB_ROW_BEFORE == 3 && PB_ROW_AFTER == 4,
                   "Row's fields are no longer row_index, primary_key, before, after = 1..4");
    const unsigned char *end = p + n;
    uint32_t last = 0;
    int first = 1, rc;
    if (bm_buf_byte(b, '{') != BM_OK) return BM_ERR_PY;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.number < last || f.number > PB_ROW_MAX_FIELD ||
            (f.number == last && f.number == PB_ROW_ROW_INDEX))
            return BM_ERR_DATA;
        if (f.number == PB_ROW_ROW_INDEX) {
            if (f.wire != WT_VARINT) return BM_ERR_DATA;
            last = f.number;
            if (!f.num) continue;
            if ((rc = put_key(b, &first, "\"rowIndex\":")) != BM_OK || (rc = put_quoted_u64(b, f.num)) != BM_OK)
                return rc;
            continue;
        }
        if (f.wire != WT_LEN) return BM_ERR_DATA;
        if (f.number != last) {                 /* the image's first column */
            if (last > PB_ROW_ROW_INDEX && bm_buf_byte(b, ']') != BM_OK) return BM_ERR_PY;
            if ((rc = put_key(b, &first, keys[f.number])) != BM_OK) return rc;
        } else if (bm_buf_byte(b, ',') != BM_OK) {
            return BM_ERR_PY;
        }
        last = f.number;
        if ((rc = put_column(b, f.data, f.len, fallback)) != BM_OK) return rc;
    }
    if (last > PB_ROW_ROW_INDEX && bm_buf_byte(b, ']') != BM_OK) return BM_ERR_PY;
    return bm_buf_byte(b, '}') == BM_OK ? BM_OK : BM_ERR_PY;
}

/* The JSON line of the serialized BinlogEvent p[0:n], "\n" included. */
static int put_event(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback) {
    static const char *operations[] = {NULL, "\"INSERT\"", "\"UPDATE\"", "\"DELETE\"", "\"SCHEMA\""};
    _Static_assert(PB_BINLOG_EVENT_OPERATION_INSERT == 1 && PB_BINLOG_EVENT_OPERATION_UPDATE == 2 &&
                   PB_BINLOG_EVENT_OPERATION_DELETE == 3 && PB_BINLOG_EVENT_OPERATION_SCHEMA == 4,
                   "BinlogEvent.Operation's numbers changed: the names above must follow");
    const unsigned char *end = p + n;
    uint32_t last = 0;
    int first = 1, rc;
    if (bm_buf_byte(b, '{') != BM_OK) return BM_ERR_PY;
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.number < last || f.number > PB_BINLOG_EVENT_MAX_FIELD ||
            (f.number == last && f.number != EV_ROWS))
            return BM_ERR_DATA;
        if (last == EV_ROWS && f.number != EV_ROWS && bm_buf_byte(b, ']') != BM_OK) return BM_ERR_PY;
        switch (f.number) {
        case EV_TIMESTAMP:
            if (f.wire != WT_LEN) return BM_ERR_DATA;
            if ((rc = put_key(b, &first, "\"utcTimestamp\":")) != BM_OK ||
                (rc = put_timestamp(b, f.data, f.len)) != BM_OK)
                return rc;
            break;
        case EV_SOURCE: case EV_SERVER_UUID: case EV_DB: case EV_TABLE: case EV_GTID:
        case EV_TRACE_INFO: case EV_STATEMENT: {
            int optional = f.number == EV_TRACE_INFO || f.number == EV_STATEMENT;
            const char *key = f.number == EV_SOURCE ? "\"source\":" : f.number == EV_SERVER_UUID ? "\"serverUuid\":"
                              : f.number == EV_DB ? "\"db\":" : f.number == EV_TABLE ? "\"table\":"
                              : f.number == EV_GTID ? "\"gtid\":" : f.number == EV_TRACE_INFO ? "\"traceInfo\":"
                              : "\"statement\":";
            if ((rc = put_string_field(b, &first, key, &f, optional)) != BM_OK) return rc;
            break;
        }
        case EV_TRANSACTION_ID: case EV_ROW_INDEX:
            if ((rc = put_u64_field(b, &first, f.number == EV_ROW_INDEX ? "\"rowIndex\":" : "\"transactionId\":",
                                    &f)) != BM_OK)
                return rc;
            break;
        case EV_QUERY_INDEX: case EV_EVENT_INDEX: case EV_SERVER_ID: case EV_GTID_DOMAIN_ID:
            if (f.wire != WT_VARINT || f.num > 0xFFFFFFFFu) return BM_ERR_DATA;
            if (!f.num) break;
            if ((rc = put_key(b, &first, f.number == EV_QUERY_INDEX ? "\"queryIndex\":"
                                         : f.number == EV_EVENT_INDEX ? "\"eventIndex\":"
                                         : f.number == EV_SERVER_ID ? "\"serverId\":" : "\"gtidDomainId\":")) != BM_OK)
                return rc;
            if (bm_buf_u64(b, f.num) != BM_OK) return BM_ERR_PY;
            break;
        case EV_OPERATION:
            if (f.wire != WT_VARINT || f.num > 4) return BM_ERR_DATA;
            if (!f.num) break;
            if ((rc = put_key(b, &first, "\"operation\":")) != BM_OK || (rc = put_lit(b, operations[f.num])) != BM_OK)
                return rc;
            break;
        case EV_LAST_IN_STATEMENT:
            if (f.wire != WT_VARINT) return BM_ERR_DATA;
            if (!f.num) break;
            if ((rc = put_key(b, &first, "\"lastInStatement\":true")) != BM_OK) return rc;
            break;
        case EV_ROWS:
            if (f.wire != WT_LEN) return BM_ERR_DATA;
            if (last != EV_ROWS) {
                if ((rc = put_key(b, &first, "\"rows\":[")) != BM_OK) return rc;
            } else if (bm_buf_byte(b, ',') != BM_OK) {
                return BM_ERR_PY;
            }
            if ((rc = put_row(b, f.data, f.len, fallback)) != BM_OK) return rc;
            break;
        case EV_POSITION:
            if (f.wire != WT_LEN) return BM_ERR_DATA;
            if ((rc = put_key(b, &first, "\"position\":")) != BM_OK || (rc = put_position(b, f.data, f.len)) != BM_OK)
                return rc;
            break;
        default:    /* schema_changes, statement_raw: rare, the Python path's */
            return BM_ERR_DATA;
        }
        last = f.number;
    }
    if (last == EV_ROWS && bm_buf_byte(b, ']') != BM_OK) return BM_ERR_PY;
    return put_lit(b, "}\n");
}

PyObject *bm_py_jsonl_event(PyObject *self, PyObject *args) {
    PyObject *data, *fallback;
    if (!PyArg_ParseTuple(args, "OO:jsonl_event", &data, &fallback)) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) return NULL;
    bm_buf b;
    bm_buf_init(&b);
    /* A line is about twice its event's bytes: one allocation up front instead of a doubling series. */
    int rc = view.len < PY_SSIZE_T_MAX / 4 ? bm_buf_reserve(&b, 2 * view.len + 256) : BM_OK;
    if (rc == BM_OK) rc = put_event(&b, (const unsigned char *)view.buf, view.len, fallback);
    PyBuffer_Release(&view);
    PyObject *out = NULL;
    if (rc == BM_OK) out = PyBytes_FromStringAndSize((const char *)b.data, b.len);
    else if (rc == BM_ERR_DATA) out = Py_NewRef(Py_None);
    bm_buf_free(&b);
    return out;     /* NULL: BM_ERR_PY, the exception is set */
}
