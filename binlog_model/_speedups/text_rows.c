/* A text result set's row packets -> one Arrow binary column per result column, for ``apply --initial
 * live``'s snapshot read (binlog_model/io/result_set.py).
 *
 * Why: pymysql builds a Python object per value; a table of a million rows spent most of its snapshot there.
 *
 * The reference is binlog_model.io.result_set.text_rows (pure Python): this code takes exactly the packets
 * it takes and returns the same tuple, and raises ValueError with the same message where it raises
 * RowPacketError. It stops at the first packet that is incomplete, a 16 MiB continuation, out of sequence
 * or an error packet (0xFF), and after the EOF packet (0xFE, under 9 bytes). Two passes over the same
 * packets: the first checks every field against its packet and sizes each column, the second copies.
 * Every read is inside buf[pos:end], checked before it is made.
 */
#include "text_rows.h"

#include <stdint.h>
#include <string.h>

enum { MAX_PACKET = 0xFFFFFF };

/* The field at b[*p] (its row ends at end): its start (-1 for NULL) and size; *p moves past it. 0, or -1
 * with ValueError set. */
static int field_at(const unsigned char *b, Py_ssize_t *p, Py_ssize_t end, Py_ssize_t *start,
                    Py_ssize_t *size) {
    if (*p >= end) {
        PyErr_SetString(PyExc_ValueError, "the row ends before its last column");
        return -1;
    }
    unsigned first = b[*p];
    uint64_t n;
    Py_ssize_t s;
    if (first < 0xFB) {
        s = *p + 1;
        n = first;
    } else if (first == 0xFB) {
        *start = -1;
        *size = 0;
        *p += 1;
        return 0;
    } else {
        int width = first == 0xFC ? 2 : first == 0xFD ? 3 : first == 0xFE ? 8 : 0;
        if (!width || end - *p - 1 < width) {
            PyErr_Format(PyExc_ValueError, "a field's length prefix 0x%02x does not fit the row", first);
            return -1;
        }
        n = 0;
        for (int i = width - 1; i >= 0; i--) n = n << 8 | b[*p + 1 + i];
        s = *p + 1 + width;
    }
    if (n > (uint64_t)(end - s)) {
        PyErr_Format(PyExc_ValueError, "a field of %llu bytes does not fit the row", (unsigned long long)n);
        return -1;
    }
    *start = s;
    *size = (Py_ssize_t)n;
    *p = s + (Py_ssize_t)n;
    return 0;
}

PyObject *bm_py_text_rows(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end, ncols;
    int seq;
    if (!PyArg_ParseTuple(args, "y*nnin", &view, &pos, &end, &seq, &ncols)) return NULL;
    if (pos < 0 || end < pos || end > view.len || seq < 0 || seq > 255 || ncols < 1 || ncols > 65535) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "text_rows: need 0 <= pos <= end <= len(buf), 0 <= seq <= 255, "
                                          "1 <= ncols <= 65535");
        return NULL;
    }
    const unsigned char *b = view.buf;
    Py_ssize_t *sizes = PyMem_Calloc((size_t)ncols, sizeof(Py_ssize_t));
    Py_ssize_t *nulls = PyMem_Calloc((size_t)ncols, sizeof(Py_ssize_t));
    PyObject *result = NULL, *columns = NULL;
    if (!sizes || !nulls) {
        PyErr_NoMemory();
        goto done;
    }
    /* Pass 1: which packets, and each column's size. */
    Py_ssize_t p = pos, rows = 0;
    int ended = 0, s = seq;
    while (end - p >= 4) {
        Py_ssize_t length = (Py_ssize_t)b[p] | (Py_ssize_t)b[p + 1] << 8 | (Py_ssize_t)b[p + 2] << 16;
        if (length >= MAX_PACKET || end - p - 4 < length || b[p + 3] != s) break;
        Py_ssize_t start = p + 4, row_end = p + 4 + length;
        if (length && b[start] == 0xFF) break;
        if (length && length < 9 && b[start] == 0xFE) {
            ended = 1;
        } else {
            Py_ssize_t q = start;
            for (Py_ssize_t c = 0; c < ncols; c++) {
                Py_ssize_t fs, fn;
                if (field_at(b, &q, row_end, &fs, &fn) < 0) goto done;
                if (fs < 0) nulls[c]++;
                sizes[c] += fn;
            }
            if (q != row_end) {
                PyErr_Format(PyExc_ValueError, "%zd bytes follow the row's last column", row_end - q);
                goto done;
            }
            rows++;
        }
        s = (s + 1) & 0xFF;
        p = row_end;
        if (ended) break;
    }
    if (p == pos) {
        result = Py_None;
        Py_INCREF(result);
        goto done;
    }
    for (Py_ssize_t c = 0; c < ncols; c++) {
        if (sizes[c] > INT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "text_rows: a column's values exceed 2 GiB in one call");
            goto done;
        }
    }
    /* Pass 2: the columns. */
    columns = PyList_New(ncols);
    if (!columns) goto done;
    unsigned char **data = PyMem_Calloc((size_t)ncols, sizeof(unsigned char *));
    int32_t **offsets = PyMem_Calloc((size_t)ncols, sizeof(int32_t *));
    unsigned char **valid = PyMem_Calloc((size_t)ncols, sizeof(unsigned char *));
    if (!data || !offsets || !valid) {
        PyErr_NoMemory();
        goto fail2;
    }
    for (Py_ssize_t c = 0; c < ncols; c++) {
        PyObject *d = PyBytes_FromStringAndSize(NULL, sizes[c]);
        PyObject *o = PyBytes_FromStringAndSize(NULL, (rows + 1) * 4);
        PyObject *v = nulls[c] ? PyBytes_FromStringAndSize(NULL, (rows + 7) / 8) : Py_None;
        PyObject *k = PyLong_FromSsize_t(nulls[c]);
        if (v == Py_None) Py_INCREF(v);
        if (!d || !o || !v || !k) {
            Py_XDECREF(d);
            Py_XDECREF(o);
            Py_XDECREF(v);
            Py_XDECREF(k);
            goto fail2;
        }
        data[c] = (unsigned char *)PyBytes_AS_STRING(d);
        offsets[c] = (int32_t *)(void *)PyBytes_AS_STRING(o);
        offsets[c][0] = 0;
        if (v != Py_None) {
            valid[c] = (unsigned char *)PyBytes_AS_STRING(v);
            memset(valid[c], 0, (size_t)((rows + 7) / 8));
        }
        PyList_SET_ITEM(columns, c, PyTuple_Pack(4, d, o, v, k));
        Py_DECREF(d);
        Py_DECREF(o);
        Py_DECREF(v);
        Py_DECREF(k);
        if (!PyList_GET_ITEM(columns, c)) goto fail2;
        sizes[c] = 0;       /* now: bytes written */
    }
    Py_ssize_t q = pos, row = 0;
    while (q < p) {     /* the packets checked above, again */
        Py_ssize_t length = (Py_ssize_t)b[q] | (Py_ssize_t)b[q + 1] << 8 | (Py_ssize_t)b[q + 2] << 16;
        Py_ssize_t start = q + 4, row_end = q + 4 + length;
        if (!(length && length < 9 && b[start] == 0xFE)) {
            Py_ssize_t f = start;
            for (Py_ssize_t c = 0; c < ncols; c++) {
                Py_ssize_t fs, fn;
                if (field_at(b, &f, row_end, &fs, &fn) < 0) goto fail2;        /* not reached: checked */
                if (fs >= 0) {
                    memcpy(data[c] + sizes[c], b + fs, (size_t)fn);
                    sizes[c] += fn;
                    if (valid[c]) valid[c][row >> 3] |= (unsigned char)(1u << (row & 7));
                }
                /* little-endian int32, as Arrow's offsets are on every platform it runs on here */
                int32_t off = (int32_t)sizes[c];
                memcpy(&offsets[c][row + 1], &off, 4);
            }
            row++;
        }
        q = row_end;
    }
    result = Py_BuildValue("(ninNO)", p, s, rows, PyBool_FromLong(ended), columns);
fail2:
    PyMem_Free(data);
    PyMem_Free(offsets);
    PyMem_Free(valid);
done:
    Py_XDECREF(columns);
    PyMem_Free(sizes);
    PyMem_Free(nulls);
    PyBuffer_Release(&view);
    return result;
}
