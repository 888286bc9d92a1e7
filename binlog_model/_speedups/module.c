/* binlog_model._speedups: the compiled row builder (RowPlan + rows-event row images -> protobuf Row bytes).
 *
 * compile_plan() turns a plan's columns (plain tuples built by binlog_model/resolve/compiled.py) into a C
 * Plan, or raises NotImplementedError when any column needs what only Python does (then the whole plan uses
 * the Python builder). build_rows() runs the plan over one event's row images (rows.c). The entry points are
 * described in docs/speedups.md.
 */
#include "arrow_columns.h"
#include "jsonl_event.h"
#include "crc32.h"
#include "dump_frames.h"
#include "splice.h"
#include "statements.h"
#include "typed_columns.h"
#include "json_text.h"
#include "maker.h"
#include "replica_images.h"
#include "text_rows.h"
#include "values.h"
#include "utf8.h"

/* TABLE_MAP column type codes (binlog_model/wire/column_types.py). */
enum {
    T_DECIMAL = 0, T_TINY = 1, T_SHORT = 2, T_LONG = 3, T_FLOAT = 4, T_DOUBLE = 5, T_NULLTYPE = 6,
    T_TIMESTAMP = 7, T_LONGLONG = 8, T_INT24 = 9, T_DATE = 10, T_TIME = 11, T_DATETIME = 12, T_YEAR = 13,
    T_NEWDATE = 14, T_VARCHAR = 15, T_BIT = 16, T_TIMESTAMP2 = 17, T_DATETIME2 = 18, T_TIME2 = 19,
    T_VECTOR = 242, T_JSON = 245, T_NEWDECIMAL = 246, T_ENUM = 247, T_SET = 248, T_TINY_BLOB = 249,
    T_MEDIUM_BLOB = 250, T_LONG_BLOB = 251, T_BLOB = 252, T_VAR_STRING = 253, T_STRING = 254,
    T_GEOMETRY = 255
};

static PyTypeObject PlanType;

static void plan_dealloc(bm_plan *self) {
    if (self->cols) {
        for (Py_ssize_t i = 0; i < self->ncols; i++) PyMem_Free(self->cols[i].labels);
    }
    PyMem_Free(self->cols);
    PyMem_Free(self->pk);
    PyMem_Free(self->always);
    Py_XDECREF(self->keep);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "binlog_model._speedups.Plan",
    .tp_basicsize = sizeof(bm_plan),
    .tp_dealloc = (destructor)plan_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A RowPlan compiled for the C row builder.",
};

static int not_handled(const char *why, Py_ssize_t column) {
    PyErr_Format(PyExc_NotImplementedError, "column %zd: %s", column, why);
    return -1;
}

/* The wire codec of a TABLE_MAP column, as binlog_model.wire.codecs.dispatch.codec_for picks it. */
static int wire_codec(bm_col *c, long type, long meta, Py_ssize_t i) {
    c->scale = 0;
    switch (type) {
    case T_TINY: c->wire = W_TINY; return 0;
    case T_SHORT: c->wire = W_SHORT; return 0;
    case T_INT24: c->wire = W_INT24; return 0;
    case T_LONG: c->wire = W_LONG; return 0;
    case T_LONGLONG: c->wire = W_LONGLONG; return 0;
    case T_FLOAT: c->wire = W_FLOAT; return 0;
    case T_DOUBLE: c->wire = W_DOUBLE; return 0;
    case T_YEAR: c->wire = W_YEAR; return 0;
    case T_DATE: case T_NEWDATE: c->wire = W_DATE; return 0;
    case T_TIME: c->wire = W_TIME; return 0;
    case T_DATETIME: c->wire = W_DATETIME; return 0;
    case T_TIMESTAMP: c->wire = W_TIMESTAMP; return 0;
    case T_BIT: c->wire = W_BIT; c->wmeta = (int)((meta >> 8) + ((meta & 0xff) ? 1 : 0)); return 0;
    case T_NEWDECIMAL: {
        int precision = (int)(meta >> 8), scale = (int)(meta & 0xff);
        if (!(precision >= 1 && precision <= 65 && scale <= 30 && scale <= precision))
            return not_handled("NEWDECIMAL precision/scale", i);
        c->wire = W_NEWDECIMAL; c->wmeta = precision; c->scale = scale;
        return 0;
    }
    case T_TIME2: case T_DATETIME2: case T_TIMESTAMP2:
        if (meta < 0 || meta > 6) return not_handled("fractional precision", i);
        c->wire = type == T_TIME2 ? W_TIME2 : type == T_DATETIME2 ? W_DATETIME2 : W_TIMESTAMP2;
        c->wmeta = (int)meta;
        return 0;
    case T_VARCHAR: case T_VAR_STRING:
        c->wire = W_VARLEN; c->wmeta = meta > 255 ? 2 : 1;
        return 0;
    case T_BLOB: case T_TINY_BLOB: case T_MEDIUM_BLOB: case T_LONG_BLOB: case T_GEOMETRY: case T_JSON:
    case T_VECTOR:
        if (meta < 1 || meta > 4) return not_handled("length-prefix size", i);
        c->wire = type == T_GEOMETRY ? W_GEOMETRY : type == T_JSON ? W_JSON : type == T_VECTOR ? W_VECTOR
                                                                                             : W_VARLEN;
        c->wmeta = (int)meta;
        return 0;
    case T_STRING: case T_ENUM: case T_SET: {
        /* split_string_meta: CHAR lengths above 255 hide bits 8-9, inverted, in the type byte. */
        long byte0 = meta >> 8, byte1 = meta & 0xff, real = byte0, length = byte1;
        if (byte0 && (byte0 & 0x30) != 0x30) {
            real = byte0 | 0x30;
            length = byte1 | (((byte0 & 0x30) ^ 0x30) << 4);
        }
        if (real == T_ENUM) {
            if (length != 1 && length != 2) return not_handled("ENUM storage size", i);
            c->wire = W_ENUM; c->wmeta = (int)length;
        } else if (real == T_SET) {
            if (length < 1 || length > 8) return not_handled("SET storage size", i);
            c->wire = W_SET; c->wmeta = (int)length;
        } else {
            c->wire = W_VARLEN; c->wmeta = length > 255 ? 2 : 1;
        }
        return 0;
    }
    default:
        return not_handled("column type without a C codec", i);
    }
}

/* Which (kind, wire codec) pairs the C builder writes exactly as the Python setters do. */
static int kind_fits(int kind, int wire) {
    switch (kind) {
    case K_INT: case K_LONG: case K_UINT64:
        return wire == W_TINY || wire == W_SHORT || wire == W_INT24 || wire == W_LONG || wire == W_LONGLONG ||
               wire == W_YEAR;
    case K_DECIMAL: return wire == W_NEWDECIMAL;
    case K_FLOAT: return wire == W_FLOAT;
    case K_DOUBLE: return wire == W_DOUBLE;
    case K_TEXT: case K_BYTES: return wire == W_VARLEN;
    case K_ENUM: return wire == W_ENUM;
    case K_SET: return wire == W_SET;
    case K_BIT: return wire == W_BIT;
    case K_DATE: return wire == W_DATE;
    case K_DATETIME: return wire == W_DATETIME || wire == W_DATETIME2;
    case K_TIMESTAMP: return wire == W_TIMESTAMP || wire == W_TIMESTAMP2;
    case K_TIME: return wire == W_TIME || wire == W_TIME2;
    case K_GEOMETRY: return wire == W_GEOMETRY;
    case K_VECTOR: return wire == W_VECTOR;
    case K_JSON: return wire == W_JSON || wire == W_VARLEN;   /* MySQL binary JSON; MariaDB LONGTEXT */
    default: return 0;
    }
}

static int as_str(PyObject *o, bm_str *out, const char *what, Py_ssize_t i) {
    if (PyBytes_Check(o)) {
        out->ptr = PyBytes_AS_STRING(o);
        out->len = PyBytes_GET_SIZE(o);
        return 0;
    }
    if (PyUnicode_Check(o)) {
        out->ptr = PyUnicode_AsUTF8AndSize(o, &out->len);
        return out->ptr ? 0 : -1;
    }
    PyErr_Format(PyExc_TypeError, "column %zd: %s must be bytes or str", i, what);
    return -1;
}

static int index_tuple(PyObject *t, Py_ssize_t ncols, Py_ssize_t **out, Py_ssize_t *n) {
    if (!PyTuple_Check(t)) {
        PyErr_SetString(PyExc_TypeError, "primary_key and always must be tuples of ints");
        return -1;
    }
    *n = PyTuple_GET_SIZE(t);
    *out = PyMem_Calloc((size_t)(*n + 1), sizeof(Py_ssize_t));
    if (!*out) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t k = 0; k < *n; k++) {
        Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GET_ITEM(t, k));
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0 || v >= ncols) {
            PyErr_SetString(PyExc_ValueError, "column index out of range");
            return -1;
        }
        (*out)[k] = v;
    }
    return 0;
}

static int compile_column(bm_col *c, PyObject *spec, Py_ssize_t i) {
    PyObject *name, *charset, *labels;
    long type, meta, kind, int_bits, pad_to, mark;
    int wire_unsigned, tracked_unsigned;
    if (!PyTuple_Check(spec) ||
        !PyArg_ParseTuple(spec, "OllplplOOll;a plan column is (name, type, meta, wire_unsigned, kind, "
                          "unsigned, int_bits, charset, labels, pad_to, mark)",
                          &name, &type, &meta, &wire_unsigned, &kind, &tracked_unsigned, &int_bits, &charset,
                          &labels, &pad_to, &mark))
        return -1;
    if (as_str(name, &c->name, "name", i) || as_str(charset, &c->charset_name, "charset", i)) return -1;
    c->kind = (int)kind;
    c->wire_unsigned = wire_unsigned;
    c->pad_to = pad_to > 0 ? (int)pad_to : 0;
    c->mark = (int)mark;
    if (pad_to < 0 || pad_to > (1 << 24)) return not_handled("pad length", i);
    if (mark < 0 || mark > 2) return not_handled("mark", i);
    if (wire_codec(c, type, meta, i)) return -1;
    if (!kind_fits(c->kind, c->wire)) return not_handled("value kind and binlog type have no C builder", i);
    c->offset_bits = 0;
    if ((kind == K_INT || kind == K_LONG || kind == K_UINT64) && tracked_unsigned) {
        c->offset_bits = int_bits ? (int)int_bits : 32;
        if (c->offset_bits <= 0 || c->offset_bits > 64) return not_handled("integer width", i);
    }
    c->charset = 0;
    if (kind == K_TEXT) {
        const char *cs = c->charset_name.ptr;
        if (!strcmp(cs, "utf8mb4") || !strcmp(cs, "utf8mb3")) c->charset = CS_UTF8;
        else if (!strcmp(cs, "latin1")) c->charset = CS_LATIN1;
        else if (!strcmp(cs, "ascii")) c->charset = CS_ASCII;
        else if (!strcmp(cs, "binary")) c->charset = CS_NONE;
        else return not_handled("charset without a C decoder", i);
    }
    if (!PyTuple_Check(labels)) {
        PyErr_Format(PyExc_TypeError, "column %zd: labels must be a tuple", i);
        return -1;
    }
    Py_ssize_t nl = PyTuple_GET_SIZE(labels);
    int lead = kind == K_ENUM;   /* ENUM index 0 is the empty "invalid value" label */
    c->nlabels = nl + lead;
    c->labels = PyMem_Calloc((size_t)(c->nlabels + 1), sizeof(bm_str));
    if (!c->labels) { PyErr_NoMemory(); return -1; }
    if (lead) { c->labels[0].ptr = ""; c->labels[0].len = 0; }
    for (Py_ssize_t k = 0; k < nl; k++)
        if (as_str(PyTuple_GET_ITEM(labels, k), &c->labels[k + lead], "label", i)) return -1;
    return 0;
}

static PyObject *compile_plan(PyObject *self, PyObject *args) {
    PyObject *columns, *pk, *always;
    if (!PyArg_ParseTuple(args, "O!O!O!:compile_plan", &PyTuple_Type, &columns, &PyTuple_Type, &pk,
                          &PyTuple_Type, &always))
        return NULL;
    bm_plan *plan = PyObject_New(bm_plan, &PlanType);
    if (!plan) return NULL;
    plan->ncols = PyTuple_GET_SIZE(columns);
    plan->cols = NULL;
    plan->pk = plan->always = NULL;
    plan->npk = plan->nalways = 0;
    Py_INCREF(columns);
    plan->keep = columns;
    plan->cols = PyMem_Calloc((size_t)(plan->ncols + 1), sizeof(bm_col));
    if (!plan->cols) { PyErr_NoMemory(); goto fail; }
    for (Py_ssize_t i = 0; i < plan->ncols; i++)
        if (compile_column(&plan->cols[i], PyTuple_GET_ITEM(columns, i), i)) goto fail;
    if (index_tuple(pk, plan->ncols, &plan->pk, &plan->npk) ||
        index_tuple(always, plan->ncols, &plan->always, &plan->nalways))
        goto fail;
    return (PyObject *)plan;
fail:
    Py_DECREF(plan);
    return NULL;
}

int bm_is_plan(PyObject *o) { return PyObject_TypeCheck(o, &PlanType); }

/* build_rows and row_images: (plan, buf, pos, end, present, present_after, operation, image_mode | context,
 * first_row_index), the buffers held for the call. */
static PyObject *rows_call(PyObject *args, const char *format, int images) {
    PyObject *plan;
    Py_buffer buf, present, after;
    PyObject *after_obj;
    Py_ssize_t pos, end, mode;
    int operation;
    unsigned long long first;
    if (!PyArg_ParseTuple(args, format, &PlanType, &plan, &buf, &pos, &end, &present, &after_obj, &operation,
                          &mode, &first))
        return NULL;
    after.buf = NULL;
    after.len = 0;
    int have_after = after_obj != Py_None;
    if (have_after && PyObject_GetBuffer(after_obj, &after, PyBUF_SIMPLE) < 0) {
        PyBuffer_Release(&buf);
        PyBuffer_Release(&present);
        return NULL;
    }
    PyObject *result;
    const unsigned char *after_bytes = have_after ? (const unsigned char *)after.buf : NULL;
    if (end > buf.len || operation < 1 || operation > 3 || mode < 0 || (!images && mode > 3)) {
        result = Py_None;
        Py_INCREF(result);
    } else if (images) {
        result = bm_row_images((bm_plan *)plan, (const unsigned char *)buf.buf, pos, end,
                               (const unsigned char *)present.buf, present.len, after_bytes, after.len, operation,
                               mode, (uint64_t)first);
    } else {
        result = bm_build_rows((bm_plan *)plan, (const unsigned char *)buf.buf, pos, end,
                               (const unsigned char *)present.buf, present.len, after_bytes, after.len, operation,
                               (int)mode, (uint64_t)first);
    }
    if (have_after) PyBuffer_Release(&after);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&present);
    return result;
}

static PyObject *build_rows(PyObject *self, PyObject *args) {
    return rows_call(args, "O!y*nny*OinK:build_rows", 0);
}

static PyObject *row_images(PyObject *self, PyObject *args) {
    return rows_call(args, "O!y*nny*OinK:row_images", 1);
}

static PyObject *utf8_valid(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    int valid = bm_utf8_valid((const unsigned char *)view.buf, view.len);
    PyBuffer_Release(&view);
    return PyBool_FromLong(valid);
}

static PyMethodDef methods[] = {
    {"compile_plan", compile_plan, METH_VARARGS,
     "compile_plan(columns, primary_key, always) -> Plan; NotImplementedError when a column needs Python"},
    {"build_rows", build_rows, METH_VARARGS,
     "build_rows(plan, buf, pos, end, present, present_after, operation, image_mode, first_row_index) "
     "-> (list of Row bytes, end position), or None when the bytes are bad (run the Python reference)"},
    {"row_images", row_images, METH_VARARGS,
     "row_images(plan, buf, pos, end, present, present_after, operation, context, first_row_index) "
     "-> (list of raw row frames, end position), or None when the bytes are bad (build the rows instead)"},
    {"json_text", bm_py_json_text, METH_O,
     "json_text(data) -> str | None: MySQL binary JSON as JSON text (None: the Python reference decides)"},
    {"arrow_columns", bm_py_arrow_columns, METH_VARARGS,
     "arrow_columns(payloads, events_mode, fallback, file_seq) -> (rows, {name: buffers}) | None: the Spark "
     "source's columns as Arrow buffers (None: build them the Python way)"},
    {"jsonl_event", bm_py_jsonl_event, METH_VARARGS,
     "jsonl_event(data, fallback) -> bytes | None: a serialized BinlogEvent's JSON line, typed values, no "
     "defaults (None: the Python path decides)"},
    {"typed_columns", bm_py_typed_columns, METH_VARARGS,
     "typed_columns(payloads, image, versions, targets, resolve[, rows[, contexts]]) -> (rows, row_event, "
     "row_index, columns, "
     "labels) | None: one table's typed columns as Arrow buffers (None: type them the Python way)"},
    {"event_header", bm_py_event_header, METH_O,
     "event_header(payload) -> (db, table, operation, rows, file, offset, inner_index | -1, gtid, seconds, nanos, "
     "event_index, row_index) | None: an event's own fields without its rows (None: parse it with protobuf)"},
    {"crc32", bm_py_crc32, METH_VARARGS,
     "crc32(data, value=0) -> int: zlib.crc32's result (folded with PCLMULQDQ where CRC32_ACCELERATED)"},
    {"utf8_valid", utf8_valid, METH_O,
     "utf8_valid(data) -> bool: data is strict UTF-8, as bytes.decode('utf-8') accepts it"},
    {"dump_events", bm_py_dump_events, METH_VARARGS,
     "dump_events(buf, pos, end, seq, next_offset) -> None | (data, pos, seq, first_offset, first_type, last, "
     "log_pos, flags, next_offset): the plain event packets of a binlog dump's read buffer, as "
     "binlog_model.io.replication.take_events takes them"},
    {"splice_rows", bm_py_splice_rows, METH_VARARGS,
     "splice_rows(head, frames, statement) -> bytes | None: a serialized BinlogEvent without rows with its rows' "
     "framed entries and its statement field put in field order, as compiled_rows.with_rows joins them (None: "
     "a field it cannot read; run the Python reference)"},
    {"statement_run", bm_py_statement_run, METH_VARARGS,
     "statement_run(buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, tx_head, tx_gtid, "
     "tx_tail, file_field, query_index, with_text, max_rows, max_bytes) -> None | False | (pos, outputs, sizes, "
     "statements, rows, first_offset, last_offset, last_ts, last_type, last_server_id, last_flags, last_log_pos): "
     "whole row statements of an open transaction as serialized BinlogEvents (False: the buffer ends inside one; "
     "binlog_model.resolve.lane)"},
    {"transaction_run", bm_py_transaction_run, METH_VARARGS,
     "transaction_run(buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, source_field, "
     "file_field, file_seq, with_text, max_rows, max_bytes) -> None | False | (pos, outputs, transactions, "
     "statements, rows, first_offset, last_offset, last_ts, last_type, last_server_id, last_flags, last_log_pos, "
     "gtids): whole transactions as serialized BinlogEvents, and their GTIDs (binlog_model.resolve.lane)"},
    {"text_rows", bm_py_text_rows, METH_VARARGS,
     "text_rows(buf, pos, end, seq, ncols) -> None | (pos, seq, rows, ended, [(data, offsets, validity, "
     "nulls), ...]): a text result set's row packets as Arrow binary columns, as "
     "binlog_model.io.result_set.text_rows cuts them"},
    {"replica_plan", bm_py_replica_plan, METH_O,
     "replica_plan(plan_tuple) -> capsule: a replica table layout's plan for replica_images"},
    {"replica_images", bm_py_replica_images, METH_VARARGS,
     "replica_images(event, operation, plan) -> None | [(before, after, invalid), ...]: the row images' "
     "values as binlog_model.replica.batch.TableBatch._image gives them, or None where it must run"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "binlog_model._speedups", NULL, -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) {
    if (PyType_Ready(&PlanType) < 0 || bm_arrow_columns_ready() < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&PlanType);
    if (PyModule_AddObject(m, "Plan", (PyObject *)&PlanType) < 0) {
        Py_DECREF(&PlanType);
        Py_DECREF(m);
        return NULL;
    }
    if (PyType_Ready(&bm_MakerType) < 0 || PyModule_AddObjectRef(m, "Maker", (PyObject *)&bm_MakerType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (PyModule_AddIntConstant(m, "CRC32_ACCELERATED", bm_crc32_accelerated()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
