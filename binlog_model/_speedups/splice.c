/* A serialized BinlogEvent without rows + its rows' framed entries (+ the statement field) -> the whole
 * event's bytes, as binlog_model.resolve.compiled_rows.with_rows joins them.
 *
 * Why: the assembler serializes every statement's head (its fields but the rows) and puts the compiled
 * rows in field order. Finding where they go walked the head's fields in Python, ~17 varints a statement:
 * a tenth of `events` on a binlog of small statements.
 *
 * The reference is with_rows (pure Python): this code finds the same two places (the first field above
 * 11, where the rows go; the first above 15, where the statement goes) and returns the same bytes. It
 * returns None, leaving the head to the Python reference, for a field it cannot read (truncated, a group
 * or an unknown wire type). Every read is inside the head, checked before it is made (pb_wire.h).
 */
#include "splice.h"

#include <string.h>

#include "pb_wire.h"

PyObject *bm_py_splice_rows(PyObject *self, PyObject *args) {
    Py_buffer head, statement;
    PyObject *frames;
    if (!PyArg_ParseTuple(args, "y*O!y*", &head, &PyList_Type, &frames, &statement)) return NULL;
    PyObject *out = NULL;
    const unsigned char *start = head.buf, *p = start, *end = start + head.len;
    Py_ssize_t rows_at = -1, statement_at = -1;
    while (p < end) {
        const unsigned char *at = p;
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        if (f.number > 11 && rows_at < 0) {
            rows_at = at - start;
            if (statement.len == 0) break;
        }
        if (f.number > 15) {
            statement_at = at - start;
            break;
        }
    }
    if (rows_at < 0) rows_at = p - start;
    if (statement_at < 0) statement_at = p - start;
    if (statement.len == 0) statement_at = rows_at;
    Py_ssize_t n = PyList_GET_SIZE(frames), total = head.len + statement.len;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *frame = PyList_GET_ITEM(frames, i);
        if (!PyBytes_Check(frame)) {
            PyErr_SetString(PyExc_TypeError, "splice_rows: frames must be bytes");
            goto done;
        }
        if (PyBytes_GET_SIZE(frame) > PY_SSIZE_T_MAX - total) {
            PyErr_NoMemory();
            goto done;
        }
        total += PyBytes_GET_SIZE(frame);
    }
    out = PyBytes_FromStringAndSize(NULL, total);
    if (!out) goto done;
    char *w = PyBytes_AS_STRING(out);
    memcpy(w, start, (size_t)rows_at);
    w += rows_at;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *frame = PyList_GET_ITEM(frames, i);
        memcpy(w, PyBytes_AS_STRING(frame), (size_t)PyBytes_GET_SIZE(frame));
        w += PyBytes_GET_SIZE(frame);
    }
    memcpy(w, start + rows_at, (size_t)(statement_at - rows_at));
    w += statement_at - rows_at;
    memcpy(w, statement.buf, (size_t)statement.len);
    w += statement.len;
    memcpy(w, start + statement_at, (size_t)(head.len - statement_at));
done:
    PyBuffer_Release(&head);
    PyBuffer_Release(&statement);
    return out;
}
