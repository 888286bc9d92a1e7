/* The replication dump's packets -> the binlog events they carry (dump_frames.c). */
#ifndef BM_DUMP_FRAMES_H
#define BM_DUMP_FRAMES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* dump_events(buf, pos, end, seq, next_offset) -> None | (data, pos, seq, first_offset, first_type, last,
 * log_pos, flags, next_offset): binlog_model.io.replication.take_events, byte for byte. */
PyObject *bm_py_dump_events(PyObject *self, PyObject *args);

#endif
