/* A statement's serialized head, its rows' framed entries and its statement field joined (splice.c). */
#ifndef BM_SPLICE_H
#define BM_SPLICE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* splice_rows(head, frames, statement) -> bytes | None: binlog_model.resolve.compiled_rows.with_rows, byte
 * for byte (None: a head field it cannot read; the Python reference decides). */
PyObject *bm_py_splice_rows(PyObject *self, PyObject *args);

#endif
