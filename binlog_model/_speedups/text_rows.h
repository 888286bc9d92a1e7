/* A text result set's row packets -> Arrow binary columns (text_rows.c). */
#ifndef BM_TEXT_ROWS_H
#define BM_TEXT_ROWS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* text_rows(buf, pos, end, seq, ncols) -> None | (pos, seq, rows, ended, [(data, offsets, validity | None,
 * null_count), ...]): binlog_model.io.result_set.text_rows, byte for byte (ValueError where it raises
 * RowPacketError, with the same message). */
PyObject *bm_py_text_rows(PyObject *self, PyObject *args);

#endif
