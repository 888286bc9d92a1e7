/* The statement lane: whole row statements of an open transaction, from the binlog's bytes to the
 * serialized BinlogEvents the assembler would make of them.
 *
 * Why: on binlogs of small statements the decoder and the assembler cost ~170 Python calls a statement
 * (an ANNOTATE_ROWS or ROWS_QUERY, a TABLE_MAP and a rows event), ~4x what mariadb-binlog spends. Here a
 * run of such statements is read in one call.
 *
 * What it reads, and nothing else: in a transaction already open (the Python side arms the lane), a
 * statement made of an optional ANNOTATE_ROWS / ROWS_QUERY, one TABLE_MAP whose body is byte for byte the
 * one the Python path last resolved for that table id under the same schema (the caller's `tables`), then
 * one or more plain rows events (v1/v2, not compressed, no extra data) of that table and one operation,
 * the last with STMT_END_F, whose rows the compiled builder (rows.c) takes whole, and which the assembler
 * would not split (max_rows / max_bytes). Anything else - another event type, a bad CRC, a statement text
 * that is not strict UTF-8 or may carry a trace comment, bytes not all there yet - ends the run before
 * that statement, and the Python path reads it (and raises its typed errors). So the lane never decides
 * anything the reference would decide differently; the reference is the assembler
 * (binlog_model.resolve.assembler: _on_rows_query, _on_rows, _close_statement, _emit) and
 * tests/unit/test_statement_lane.py compares the two on every fixture.
 *
 * Each statement becomes one BinlogEvent, its fields written in field-number order as protobuf writes
 * them; the per-transaction and per-table fields come serialized from the caller. Every read is inside
 * [pos, end) and checked before it is made.
 */
#include "statements.h"

#include <stdint.h>
#include <string.h>

#include "buffer.h"
#include "crc32.h"
#include "plan.h"
#include "utf8.h"

#define HEADER_LEN 19
#define TABLE_MAP_EVENT 19
#define ROWS_QUERY_EVENT 29
#define ANNOTATE_ROWS_EVENT 160
#define STMT_END_F 1
#define QUERY_EVENT 2
#define XID_EVENT 16
#define GTID_LOG_EVENT 33
#define ANONYMOUS_GTID_LOG_EVENT 34
#define MARIADB_GTID_EVENT 162
#define MAX_STATEMENTS 4096     /* a run's statements: the caller's progress and memory stay fine-grained */

typedef struct {
    Py_ssize_t at;              /* offset in the buffer */
    uint32_t size, ts, server_id, log_pos;
    int type, flags;
    const unsigned char *body;  /* after the header, before the CRC */
    Py_ssize_t body_len;
} event;

typedef struct {
    const unsigned char *buf;
    Py_ssize_t end;
    Py_ssize_t crc_len;
    int verify;
    Py_ssize_t max_size;
} reader;

static inline uint32_t u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* read_event's answers besides BM_OK and BM_ERR_DATA: the event is not all in the buffer yet. */
#define LANE_MORE 1

/* The whole event at `at`, its CRC checked: BM_OK; LANE_MORE when its bytes are not all there yet;
 * BM_ERR_DATA for anything the decoder would refuse (the Python path then reads it). */
static int read_event(const reader *r, Py_ssize_t at, event *e) {
    if (at < 0 || r->end - at < HEADER_LEN) return LANE_MORE;
    const unsigned char *p = r->buf + at;
    uint32_t size = u32(p + 9);
    if ((Py_ssize_t)size < HEADER_LEN + r->crc_len || (Py_ssize_t)size > r->max_size) return BM_ERR_DATA;
    if ((Py_ssize_t)size > r->end - at) return LANE_MORE;
    if (r->crc_len && r->verify && bm_crc32(p, size - 4) != u32(p + size - 4)) return BM_ERR_DATA;
    e->at = at;
    e->size = size;
    e->ts = u32(p);
    e->type = p[4];
    e->server_id = u32(p + 5);
    e->log_pos = u32(p + 13);
    e->flags = p[17] | p[18] << 8;
    e->body = p + HEADER_LEN;
    e->body_len = (Py_ssize_t)size - HEADER_LEN - r->crc_len;
    return BM_OK;
}

/* A plain rows event type: its operation (1 insert, 2 update, 3 delete) and version; else 0. */
static int rows_operation(int type, int *version) {
    switch (type) {
    case 23: *version = 1; return 1;
    case 24: *version = 1; return 2;
    case 25: *version = 1; return 3;
    case 30: *version = 2; return 1;
    case 31: *version = 2; return 2;
    case 32: *version = 2; return 3;
    default: return 0;
    }
}

/* A statement text the Python path alone handles: not strict UTF-8 (statement_raw), or one that may lead
 * with a trace comment (trace_info): any "/" followed by "*" sends it there. */
static int text_ok(const unsigned char *s, Py_ssize_t n) {
    for (const unsigned char *p = s; (p = memchr(p, '/', (size_t)(s + n - p))) != NULL && p + 1 < s + n; p++)
        if (p[1] == '*') return 0;
    return bm_utf8_valid(s, n);
}

/* One registered table: (TABLE_MAP body, compiled plan, image mode, serialized db and table fields,
 * column count), as binlog_model.resolve.lane registers it. */
typedef struct {
    const unsigned char *map;
    Py_ssize_t map_len;
    bm_plan *plan;
    int mode;
    const unsigned char *fields;
    Py_ssize_t fields_len;
    Py_ssize_t ncols;
    PyObject *raw;      /* the resolve job's raw row images: typed bitmap -> context number (a dict), or NULL */
} table;

static int lookup(PyObject *tables, uint64_t id, table *t) {
    PyObject *key = PyLong_FromUnsignedLongLong(id);
    if (!key) return BM_ERR_PY;
    PyObject *entry = PyDict_GetItemWithError(tables, key);
    Py_DECREF(key);
    if (!entry) return PyErr_Occurred() ? BM_ERR_PY : BM_ERR_DATA;
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 6 || !PyBytes_Check(PyTuple_GET_ITEM(entry, 0)) ||
        !bm_is_plan(PyTuple_GET_ITEM(entry, 1)) || !PyLong_Check(PyTuple_GET_ITEM(entry, 2)) ||
        !PyBytes_Check(PyTuple_GET_ITEM(entry, 3)) || !PyLong_Check(PyTuple_GET_ITEM(entry, 4)) ||
        (PyTuple_GET_ITEM(entry, 5) != Py_None && !PyDict_Check(PyTuple_GET_ITEM(entry, 5)))) {
        PyErr_SetString(PyExc_TypeError, "statement_run: a table is (bytes, Plan, int, bytes, int, dict|None)");
        return BM_ERR_PY;
    }
    t->raw = PyTuple_GET_ITEM(entry, 5) == Py_None ? NULL : PyTuple_GET_ITEM(entry, 5);
    t->map = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(entry, 0));
    t->map_len = PyBytes_GET_SIZE(PyTuple_GET_ITEM(entry, 0));
    t->plan = (bm_plan *)PyTuple_GET_ITEM(entry, 1);
    t->mode = (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 2));
    t->fields = (const unsigned char *)PyBytes_AS_STRING(PyTuple_GET_ITEM(entry, 3));
    t->fields_len = PyBytes_GET_SIZE(PyTuple_GET_ITEM(entry, 3));
    t->ncols = PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 4));
    if (PyErr_Occurred()) return BM_ERR_PY;
    return BM_OK;
}

typedef struct {
    const unsigned char *post_headers;  /* 256 bytes: the FDE's post-header length of each event type */
    PyObject *tables;
    /* The transaction's own fields, serialized (source, server_uuid, transaction_id; gtid; gtid_domain_id),
     * and the position's file field. */
    bm_buf tx_head, tx_gtid, tx_tail, file_field;
    /* The transaction's GTID as a run's GtidSet takes it (gtid.py's GtidSet.add_event): MySQL's source
     * uuid and gno, MariaDB's domain, server id and sequence number; none for an ANONYMOUS_GTID. */
    enum { GTID_NONE, GTID_MYSQL, GTID_MARIADB } gtid_kind;
    char gtid_uuid[37];
    uint64_t gtid_no, gtid_domain, gtid_server;
    Py_ssize_t base;                    /* the file offset of buf[0] */
    int with_text;
    Py_ssize_t max_rows, max_bytes;
} context;

/* The rows a statement's rows events hold, and where its first one is. */
typedef struct {
    PyObject *frames;
    Py_ssize_t count, bytes;
    int operation;
    event first;
} statement_rows;

/* The context number `contexts` gives a bitmap of `n` bytes; -1 where it has none, BM_ERR_PY on an error. */
static Py_ssize_t raw_context(PyObject *contexts, const unsigned char *bitmap, Py_ssize_t n) {
    PyObject *key = PyBytes_FromStringAndSize((const char *)bitmap, n);
    if (!key) return BM_ERR_PY;
    PyObject *found = PyDict_GetItemWithError(contexts, key);
    Py_DECREF(key);
    if (!found) return PyErr_Occurred() ? BM_ERR_PY : -1;
    Py_ssize_t context = PyLong_AsSsize_t(found);
    if (context < 0) return PyErr_Occurred() ? BM_ERR_PY : -1;
    return context;
}

/* One rows event of table `id` into `s`: BM_OK, BM_ERR_DATA (not for the lane) or BM_ERR_PY. */
static int add_rows(const context *c, const event *e, uint64_t id, const table *t, statement_rows *s,
                    int *statement_end) {
    int version, operation = rows_operation(e->type, &version);
    if (!operation || (s->operation && operation != s->operation)) return BM_ERR_DATA;
    const unsigned char *b = e->body;
    Py_ssize_t n = e->body_len, ph = c->post_headers[e->type];
    int id_len = ph == 6 ? 4 : 6;
    Py_ssize_t known = id_len + 2 + (version == 2 ? 2 : 0), at = ph <= known ? known : ph;
    if (n <= at) return BM_ERR_DATA;
    if (version == 2 && (b[id_len + 2] != 2 || b[id_len + 3] != 0)) return BM_ERR_DATA;   /* extra data */
    if (le(b, id_len) != id || b[at] >= 0xFB || b[at] != t->ncols) return BM_ERR_DATA;
    *statement_end = (b[id_len] | b[id_len + 1] << 8) & STMT_END_F;
    Py_ssize_t nbytes = (b[at] + 7) >> 3;
    Py_ssize_t images = at + 1 + (operation == 2 ? 2 * nbytes : nbytes);
    if (images > n) return BM_ERR_DATA;
    const unsigned char *after = operation == 2 ? b + at + 1 + nbytes : NULL;
    PyObject *built;
    if (t->raw) {
        /* Raw row images (compiled_rows.RawImages): the context of the typed image's bitmap (an UPDATE's
         * after image, else the one image), which the Python path numbered at the first event that had it;
         * one not numbered yet sends the statement that path. */
        Py_ssize_t context = raw_context(t->raw, after ? after : b + at + 1, nbytes);
        if (context < 0) return context == BM_ERR_PY ? BM_ERR_PY : BM_ERR_DATA;
        built = bm_row_images(t->plan, b, images, n, b + at + 1, nbytes, after, after ? nbytes : 0, operation,
                              context, (uint64_t)s->count);
    } else {
        built = bm_build_rows(t->plan, b, images, n, b + at + 1, nbytes, after, after ? nbytes : 0, operation,
                              t->mode, (uint64_t)s->count);
    }
    if (!built) return BM_ERR_PY;
    int rc = BM_ERR_DATA;
    if (built != Py_None && PyLong_AsSsize_t(PyTuple_GET_ITEM(built, 1)) == n) {
        PyObject *rows = PyTuple_GET_ITEM(built, 0);
        Py_ssize_t count = PyList_GET_SIZE(rows);
        Py_ssize_t per_row = count ? (Py_ssize_t)e->size / count : 1;
        if (per_row < 1) per_row = 1;
        Py_ssize_t held = s->count;
        /* The assembler's split rule (_on_rows): no new piece, and all of this event's rows in this one. */
        int splits = (held && (held >= c->max_rows || s->bytes + per_row > c->max_bytes)) ||
                     (count > 1 && (c->max_rows - held < count || c->max_bytes - s->bytes < count * per_row));
        if (count && !splits) {
            rc = PyList_SetSlice(s->frames, PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, rows) < 0 ? BM_ERR_PY : BM_OK;
            if (rc == BM_OK) {
                if (!s->operation) s->first = *e;
                s->operation = operation;
                s->count += count;
                s->bytes += per_row * count;
            }
        }
    }
    Py_DECREF(built);
    return rc;
}

static int put_varint_field(bm_buf *o, const unsigned char *tag, int tag_len, uint64_t v) {
    if (!v) return BM_OK;
    return bm_buf_put(o, tag, tag_len) || bm_buf_varint(o, v) ? BM_ERR_PY : BM_OK;
}

/* The statement's BinlogEvent, as _emit and with_rows make it for one piece (event_index 0, the last). */
static PyObject *serialize(const context *c, const table *t, const statement_rows *s, uint64_t query_index,
                           const unsigned char *text, Py_ssize_t text_len) {
    bm_buf o, pos;
    bm_buf_init(&o);
    bm_buf_init(&pos);
    PyObject *out = NULL;
    const event *f = &s->first;
    Py_ssize_t n = PyList_GET_SIZE(s->frames);
    int ts_len = f->ts ? 1 + bm_varint_size(f->ts) : 0;
    static const unsigned char ts_tag = 0x0a, qi_tag = 0x28, op_tag = 0x50, pos_tag = 0x6a,
                               offset_tag = 0x10, next_tag = 0x18, text_tag = 0x7a,
                               last[3] = {0x88, 0x01, 0x01}, server_tag[2] = {0x90, 0x01};
    if (bm_buf_put(&pos, c->file_field.data, c->file_field.len) ||
        put_varint_field(&pos, &offset_tag, 1, (uint64_t)(c->base + f->at)) ||
        put_varint_field(&pos, &next_tag, 1, f->log_pos))
        goto done;
    if (bm_buf_byte(&o, ts_tag) || bm_buf_varint(&o, (uint64_t)ts_len) ||
        (f->ts && (bm_buf_byte(&o, 0x08) || bm_buf_varint(&o, f->ts))) ||
        bm_buf_put(&o, c->tx_head.data, c->tx_head.len) ||
        put_varint_field(&o, &qi_tag, 1, query_index) ||
        bm_buf_put(&o, t->fields, t->fields_len) ||
        put_varint_field(&o, &op_tag, 1, (uint64_t)s->operation))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *frame = PyList_GET_ITEM(s->frames, i);
        if (bm_buf_put(&o, PyBytes_AS_STRING(frame), PyBytes_GET_SIZE(frame))) goto done;
    }
    if (bm_buf_byte(&o, pos_tag) || bm_buf_varint(&o, (uint64_t)pos.len) || bm_buf_put(&o, pos.data, pos.len) ||
        bm_buf_put(&o, c->tx_gtid.data, c->tx_gtid.len) ||
        (text && (bm_buf_byte(&o, text_tag) || bm_buf_varint(&o, (uint64_t)text_len) ||
                  bm_buf_put(&o, text, text_len))) ||
        bm_buf_put(&o, last, 3) ||
        put_varint_field(&o, server_tag, 2, f->server_id) ||
        bm_buf_put(&o, c->tx_tail.data, c->tx_tail.len))
        goto done;
    out = PyBytes_FromStringAndSize((const char *)o.data, o.len);
done:
    bm_buf_free(&o);
    bm_buf_free(&pos);
    return out;
}

/* Whether the statement (whole: the transaction) that starts at `at` is all in the buffer, from the
 * events' headers alone: BM_OK, LANE_MORE, or BM_ERR_DATA where a header already shows it is not one for
 * the lane. Checked before anything is built, so a statement that waits for the next chunk is not built
 * again at each one. */
static int all_there(const reader *r, const context *c, Py_ssize_t at, int whole) {
    for (int index = 0;; index++) {
        if (r->end - at < HEADER_LEN) return LANE_MORE;
        const unsigned char *p = r->buf + at;
        Py_ssize_t size = u32(p + 9);
        if (size < HEADER_LEN + r->crc_len || size > r->max_size) return BM_ERR_DATA;
        if (size > r->end - at) return LANE_MORE;
        int type = p[4], version;
        if (whole) {
            if (type == XID_EVENT) return BM_OK;
            /* a transaction's own GTID and BEGIN come first; another one is past its end */
            if ((index > 0 && (type == GTID_LOG_EVENT || type == ANONYMOUS_GTID_LOG_EVENT ||
                               type == MARIADB_GTID_EVENT)) || (index > 1 && type == QUERY_EVENT))
                return BM_ERR_DATA;
        } else if (rows_operation(type, &version)) {
            Py_ssize_t id_len = c->post_headers[type] == 6 ? 4 : 6;
            if (size < HEADER_LEN + r->crc_len + id_len + 2) return BM_ERR_DATA;
            if ((p[HEADER_LEN + id_len] | p[HEADER_LEN + id_len + 1] << 8) & STMT_END_F) return BM_OK;
        } else if (type != TABLE_MAP_EVENT && (index > 0 || (type != ANNOTATE_ROWS_EVENT &&
                                                              type != ROWS_QUERY_EVENT))) {
            return BM_ERR_DATA;
        }
        at += size;
    }
}

/* One statement from `start` (`checked`: all_there already found it whole): its BinlogEvent appended to
 * outputs (BM_OK, *next past it), BM_ERR_DATA (not for the lane: the run ends before it), LANE_MORE (the
 * buffer ends inside it) or BM_ERR_PY. */
static int one_statement(const reader *r, const context *c, Py_ssize_t start, int checked,
                         uint64_t query_index, PyObject *outputs, PyObject *sizes, Py_ssize_t *next,
                         Py_ssize_t *rows, event *last) {
    event e;
    const unsigned char *text = NULL;
    Py_ssize_t text_len = 0, at = start;
    int rc = checked ? BM_OK : all_there(r, c, at, 0);
    if (rc || (rc = read_event(r, at, &e))) return rc;
    if (e.type == ANNOTATE_ROWS_EVENT || e.type == ROWS_QUERY_EVENT) {
        Py_ssize_t skip = e.type == ROWS_QUERY_EVENT;   /* ROWS_QUERY: a length byte, then the text */
        if (e.body_len < skip || !text_ok(e.body + skip, e.body_len - skip)) return BM_ERR_DATA;
        text = e.body + skip;
        text_len = e.body_len - skip;
        at += e.size;
        if ((rc = read_event(r, at, &e))) return rc;
    }
    if (e.type != TABLE_MAP_EVENT) return BM_ERR_DATA;
    int id_len = c->post_headers[TABLE_MAP_EVENT] == 6 ? 4 : 6;
    if (e.body_len < id_len) return BM_ERR_DATA;
    uint64_t id = le(e.body, id_len);
    table t;
    if ((rc = lookup(c->tables, id, &t))) return rc;
    if (t.map_len != e.body_len || memcmp(t.map, e.body, (size_t)e.body_len)) return BM_ERR_DATA;
    at += e.size;
    statement_rows s = {PyList_New(0), 0, 0, 0, {0}};
    if (!s.frames) return BM_ERR_PY;
    int statement_end = 0;
    while (!statement_end) {
        if ((rc = read_event(r, at, &e))) break;
        if ((rc = add_rows(c, &e, id, &t, &s, &statement_end))) break;
        at += e.size;
    }
    if (rc == BM_OK) {
        PyObject *out = serialize(c, &t, &s, query_index, c->with_text ? text : NULL, text_len);
        PyObject *size = out ? PyLong_FromSsize_t(s.bytes) : NULL;
        if (!size || PyList_Append(outputs, out) < 0 || PyList_Append(sizes, size) < 0) rc = BM_ERR_PY;
        Py_XDECREF(out);
        Py_XDECREF(size);
        if (rc == BM_OK) {
            *next = at;
            *rows += s.count;
            *last = e;
        }
    }
    Py_DECREF(s.frames);
    return rc;
}

/* -- whole transactions ------------------------------------------------------------------------------ */

#define MARIADB_FL_STANDALONE 1
#define MARIADB_FL_GROUP_COMMIT_ID 2
#define MARIADB_FL_XA (64 | 128)

/* Whether wire/parsers/gtid.py's parse_gtid_event reads this body without an error: its reads, in order. */
static int mysql_gtid_parses(const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t p = 25;                                  /* flags, sid, gno */
    if (n < p) return 0;
    if (p < n && b[p] == 2) {                           /* logical timestamps */
        p += 17;
        if (p > n) return 0;
        if (n - p >= 7) {
            int original = b[p + 6] & 0x80;             /* bit 55: an original_commit_timestamp follows */
            p += 7;
            if (original) {
                if (n - p < 7) return 0;
                p += 7;
            }
        }
        if (p < n) {                                    /* transaction_length, length-encoded */
            unsigned char first = b[p++];
            Py_ssize_t more = first < 0xFB ? 0 : first == 0xFB ? 0 : first == 0xFC ? 2 : first == 0xFD ? 3
                                                                              : first == 0xFE ? 8 : -1;
            if (more < 0 || n - p < more) return 0;
            p += more;
        }
        if (n - p >= 4) {                               /* immediate (and original) server version */
            int original = b[p + 3] & 0x80;
            p += 4;
            if (original && n - p < 4) return 0;
        }
    }
    return 1;
}

/* Whether query.py's _parse_status_vars reads these status variables without an error (an unknown code
 * ends the parse there, as it does). */
static int status_vars_parse(const unsigned char *b, Py_ssize_t n) {
    Py_ssize_t p = 0;
    while (p < n) {
        unsigned char code = b[p++];
        Py_ssize_t fixed = -1;
        switch (code) {
        case 0: case 10: fixed = 4; break;
        case 1: case 9: case 17: case 129: fixed = 8; break;
        case 3: fixed = 4; break;
        case 4: fixed = 6; break;
        case 7: case 8: case 18: fixed = 2; break;
        case 13: case 128: fixed = 3; break;
        case 16: case 19: case 20: case 130: fixed = 1; break;
        case 2: case 5: case 6: case 11: {              /* one (two for 11) u8-prefixed strings; 2: + 1 */
            for (int k = 0; k < (code == 11 ? 2 : 1); k++) {
                if (p >= n || n - p - 1 < b[p]) return 0;
                p += 1 + b[p];
            }
            if (code == 2) {
                if (p >= n) return 0;
                p++;
            }
            continue;
        }
        case 12: {                                      /* updated db names: a count, NUL-ended names */
            if (p >= n) return 0;
            unsigned char count = b[p++];
            if (count == 254) continue;
            for (int k = 0; k < count; k++) {
                const unsigned char *nul = memchr(b + p, 0, (size_t)(n - p));
                if (!nul) return 0;
                p = nul - b + 1;
            }
            continue;
        }
        case 131: {                                     /* character set collations: a count, 4 bytes each */
            if (p >= n) return 0;
            Py_ssize_t count = b[p++];
            if (n - p < 4 * count) return 0;
            p += 4 * count;
            continue;
        }
        default:
            return 1;
        }
        if (n - p < fixed) return 0;
        p += fixed;
    }
    return 1;
}

/* A QUERY event whose text is BEGIN, as query.py's _parse_query_parts would read it without an error. */
static int is_begin(const context *c, const event *e) {
    Py_ssize_t post = c->post_headers[QUERY_EVENT], n = e->body_len;
    const unsigned char *b = e->body;
    if (post < 13 || n < post) return 0;
    Py_ssize_t schema_len = b[8], status_len = b[11] | b[12] << 8;
    if (n - post < status_len || !status_vars_parse(b + post, status_len)) return 0;
    Py_ssize_t at = post + status_len;
    if (n - at < schema_len + 1) return 0;
    at += schema_len + 1;
    return n - at == 5 && memcmp(b + at, "BEGIN", 5) == 0;
}

/* The identity a GTID event gives its transaction (transactions.py's gtid_identity, mariadb_identity and
 * fallback_identity), serialized into the context's tx_* fields; BM_ERR_DATA for a GTID the Python path
 * alone reads (a tagged or standalone one, XA, a body it would refuse). *begins: the event opens the
 * transaction itself (MariaDB; MySQL's BEGIN follows). */
static int identity(context *c, const event *e, const unsigned char *source, Py_ssize_t source_len,
                    uint64_t file_seq, int *begins) {
    char uuid[37], gtid[96];
    const char *server_uuid = "";
    uint64_t tid, domain = 0;
    int gtid_len = 0;
    const unsigned char *b = e->body;
    c->gtid_kind = GTID_NONE;
    if (e->type == GTID_LOG_EVENT || e->type == ANONYMOUS_GTID_LOG_EVENT) {
        if (!mysql_gtid_parses(b, e->body_len)) return BM_ERR_DATA;
        *begins = 0;
        if (e->type == ANONYMOUS_GTID_LOG_EVENT) {
            tid = file_seq << 40 | (uint64_t)(c->base + e->at);
        } else {
            static const char hex[] = "0123456789abcdef";
            char *w = uuid;
            for (int i = 0; i < 16; i++) {
                if (i == 4 || i == 6 || i == 8 || i == 10) *w++ = '-';
                *w++ = hex[b[1 + i] >> 4];
                *w++ = hex[b[1 + i] & 15];
            }
            *w = 0;
            server_uuid = uuid;
            tid = le(b + 17, 8);
            gtid_len = snprintf(gtid, sizeof gtid, "%s:%llu", uuid, (unsigned long long)tid);
            c->gtid_kind = GTID_MYSQL;
            memcpy(c->gtid_uuid, uuid, sizeof uuid);
            c->gtid_no = tid;
        }
    } else if (e->type == MARIADB_GTID_EVENT) {
        if (e->body_len < 13) return BM_ERR_DATA;
        int flags = b[12];
        if (flags & (MARIADB_FL_STANDALONE | MARIADB_FL_XA)) return BM_ERR_DATA;
        if ((flags & MARIADB_FL_GROUP_COMMIT_ID) && e->body_len < 21) return BM_ERR_DATA;
        *begins = 1;
        tid = le(b, 8);
        domain = le(b + 8, 4);
        gtid_len = snprintf(gtid, sizeof gtid, "%llu-%lu-%llu", (unsigned long long)domain,
                            (unsigned long)e->server_id, (unsigned long long)tid);
        c->gtid_kind = GTID_MARIADB;
        c->gtid_domain = domain;
        c->gtid_server = e->server_id;
        c->gtid_no = tid;
    } else {
        return BM_ERR_DATA;
    }
    static const unsigned char uuid_tag = 0x1a, tid_tag = 0x20, gtid_tag = 0x72, domain_tag[2] = {0x98, 0x01};
    Py_ssize_t uuid_len = (Py_ssize_t)strlen(server_uuid);
    c->tx_head.len = c->tx_gtid.len = c->tx_tail.len = 0;
    if (bm_buf_put(&c->tx_head, source, source_len) ||
        (uuid_len && (bm_buf_byte(&c->tx_head, uuid_tag) || bm_buf_varint(&c->tx_head, (uint64_t)uuid_len) ||
                      bm_buf_put(&c->tx_head, server_uuid, uuid_len))) ||
        put_varint_field(&c->tx_head, &tid_tag, 1, tid) ||
        (gtid_len > 0 && (bm_buf_byte(&c->tx_gtid, gtid_tag) || bm_buf_varint(&c->tx_gtid, (uint64_t)gtid_len) ||
                          bm_buf_put(&c->tx_gtid, gtid, gtid_len))) ||
        put_varint_field(&c->tx_tail, domain_tag, 2, domain))
        return BM_ERR_PY;
    return BM_OK;
}

/* One whole transaction from `start` (a GTID event, MySQL's BEGIN, its statements, the XID): its events
 * appended to outputs (BM_OK, *next past it); BM_ERR_DATA, LANE_MORE or BM_ERR_PY as one_statement. */
static int one_transaction(const reader *r, context *c, Py_ssize_t start, const unsigned char *source,
                           Py_ssize_t source_len, uint64_t file_seq, PyObject *outputs, PyObject *gtids,
                           Py_ssize_t *next, Py_ssize_t *statements, Py_ssize_t *rows, event *last) {
    event e;
    int rc, begins;
    Py_ssize_t at = start;
    if ((rc = all_there(r, c, at, 1)) || (rc = read_event(r, at, &e))) return rc;
    if ((rc = identity(c, &e, source, source_len, file_seq, &begins))) return rc;
    at += e.size;
    if (!begins) {
        if ((rc = read_event(r, at, &e))) return rc;
        if (e.type != QUERY_EVENT || !is_begin(c, &e)) return BM_ERR_DATA;
        at += e.size;
    }
    Py_ssize_t mark = PyList_GET_SIZE(outputs), count = 0, held_rows = 0;
    PyObject *sizes = PyList_New(0);
    if (!sizes) return BM_ERR_PY;
    for (;;) {
        if ((rc = read_event(r, at, &e))) break;
        if (e.type == XID_EVENT) {
            rc = e.body_len == 8 ? BM_OK : BM_ERR_DATA;
            at += e.size;
            break;
        }
        Py_ssize_t before = at;
        event end;
        rc = one_statement(r, c, before, 1, (uint64_t)count, outputs, sizes, &at, &held_rows, &end);
        if (rc) break;
        count++;
    }
    Py_DECREF(sizes);
    if (rc) {       /* nothing of it stays: the Python path reads it from its start */
        if (PyList_SetSlice(outputs, mark, PY_SSIZE_T_MAX, NULL) < 0) return BM_ERR_PY;
        return rc;
    }
    if (c->gtid_kind != GTID_NONE) {
        PyObject *gtid = c->gtid_kind == GTID_MYSQL
            ? Py_BuildValue("(sK)", c->gtid_uuid, (unsigned long long)c->gtid_no)
            : Py_BuildValue("(KKK)", (unsigned long long)c->gtid_domain, (unsigned long long)c->gtid_server,
                            (unsigned long long)c->gtid_no);
        if (!gtid || PyList_Append(gtids, gtid) < 0) {
            Py_XDECREF(gtid);
            return BM_ERR_PY;
        }
        Py_DECREF(gtid);
    }
    *next = at;
    *statements += count;
    *rows += held_rows;
    *last = e;
    return BM_OK;
}

/* The arguments both entry points take, checked (0; -1 with ValueError set), and the context's table of
 * post-header lengths. */
static int check_args(context *c, const Py_buffer *buf, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t crc_len,
                      const Py_buffer *post_headers, const char *name) {
    if (post_headers->len != 256 || pos < 0 || end > buf->len || pos > end || (crc_len != 0 && crc_len != 4) ||
        c->max_rows < 1 || c->max_bytes < 1) {
        PyErr_Format(PyExc_ValueError, "%s: bad arguments", name);
        return -1;
    }
    c->post_headers = post_headers->buf;
    return 0;
}

static void context_free(context *c) {
    bm_buf_free(&c->tx_head);
    bm_buf_free(&c->tx_gtid);
    bm_buf_free(&c->tx_tail);
    bm_buf_free(&c->file_field);
}

PyObject *bm_py_transaction_run(PyObject *self, PyObject *args) {
    Py_buffer buf, post_headers, source, file_field;
    Py_ssize_t pos, end, crc_len, max_size;
    int verify;
    unsigned long long file_seq;
    context c;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "y*nnnnpny*O!y*y*Kpnn:transaction_run", &buf, &pos, &end, &c.base, &crc_len,
                          &verify, &max_size, &post_headers, &PyDict_Type, &c.tables, &source, &file_field,
                          &file_seq, &c.with_text, &c.max_rows, &c.max_bytes))
        return NULL;
    PyObject *result = NULL, *outputs = NULL, *gtids = NULL;
    if (check_args(&c, &buf, pos, end, crc_len, &post_headers, "transaction_run")) goto done;
    if (file_seq >= (1ULL << 24)) {     /* (seq << 40 | offset) must stay in 64 bits */
        PyErr_SetString(PyExc_ValueError, "transaction_run: file sequence out of range");
        goto done;
    }
    if (bm_buf_put(&c.file_field, file_field.buf, file_field.len)) goto done;
    reader r = {buf.buf, end, crc_len, verify, max_size};
    outputs = PyList_New(0);
    gtids = PyList_New(0);
    if (!outputs || !gtids) goto done;
    Py_ssize_t at = pos, rows = 0, statements = 0, transactions = 0;
    event last;
    memset(&last, 0, sizeof last);
    int rc = BM_OK;
    while (transactions < MAX_STATEMENTS) {
        rc = one_transaction(&r, &c, at, source.buf, source.len, file_seq, outputs, gtids, &at, &statements,
                             &rows, &last);
        if (rc == BM_ERR_PY) goto done;
        if (rc != BM_OK) break;
        transactions++;
    }
    if (!transactions) {
        result = Py_NewRef(rc == LANE_MORE ? Py_False : Py_None);
        goto done;
    }
    result = Py_BuildValue("(nOnnnnnkiknkO)", at, outputs, transactions, statements, rows, c.base + pos,
                           c.base + last.at, (unsigned long)last.ts, last.type, (unsigned long)last.server_id,
                           (Py_ssize_t)last.flags, (unsigned long)last.log_pos, gtids);
done:
    Py_XDECREF(outputs);
    Py_XDECREF(gtids);
    context_free(&c);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&post_headers);
    PyBuffer_Release(&source);
    PyBuffer_Release(&file_field);
    return result;
}

PyObject *bm_py_statement_run(PyObject *self, PyObject *args) {
    Py_buffer buf, post_headers, head, gtid, tail, file_field;
    Py_ssize_t pos, end, crc_len, max_size;
    int verify;
    unsigned long long query_index;
    context c;
    memset(&c, 0, sizeof c);
    if (!PyArg_ParseTuple(args, "y*nnnnpny*O!y*y*y*y*Kpnn:statement_run", &buf, &pos, &end, &c.base, &crc_len,
                          &verify, &max_size, &post_headers, &PyDict_Type, &c.tables, &head, &gtid, &tail,
                          &file_field, &query_index, &c.with_text, &c.max_rows, &c.max_bytes))
        return NULL;
    PyObject *result = NULL, *outputs = NULL, *sizes = NULL;
    if (check_args(&c, &buf, pos, end, crc_len, &post_headers, "statement_run")) goto done;
    if (bm_buf_put(&c.tx_head, head.buf, head.len) || bm_buf_put(&c.tx_gtid, gtid.buf, gtid.len) ||
        bm_buf_put(&c.tx_tail, tail.buf, tail.len) || bm_buf_put(&c.file_field, file_field.buf, file_field.len))
        goto done;
    reader r = {buf.buf, end, crc_len, verify, max_size};
    outputs = PyList_New(0);
    sizes = PyList_New(0);
    if (!outputs || !sizes) goto done;
    Py_ssize_t at = pos, rows = 0, statements = 0;
    event last;
    memset(&last, 0, sizeof last);
    int rc = BM_OK;
    while (statements < MAX_STATEMENTS) {
        rc = one_statement(&r, &c, at, 0, query_index + (uint64_t)statements, outputs, sizes, &at, &rows,
                           &last);
        if (rc == BM_ERR_PY) goto done;
        if (rc != BM_OK) break;
        statements++;
    }
    if (!statements) {      /* False: the next statement may be for the lane once more bytes are there */
        result = Py_NewRef(rc == LANE_MORE ? Py_False : Py_None);
        goto done;
    }
    result = Py_BuildValue("(nOOnnnnkiknk)", at, outputs, sizes, statements, rows, c.base + pos, c.base + last.at,
                           (unsigned long)last.ts, last.type, (unsigned long)last.server_id, (Py_ssize_t)last.flags,
                           (unsigned long)last.log_pos);
done:
    Py_XDECREF(outputs);
    Py_XDECREF(sizes);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&post_headers);
    context_free(&c);
    PyBuffer_Release(&head);
    PyBuffer_Release(&gtid);
    PyBuffer_Release(&tail);
    PyBuffer_Release(&file_field);
    return result;
}
