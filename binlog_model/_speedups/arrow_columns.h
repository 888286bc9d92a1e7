/* Serialized BinlogEvents -> Arrow buffers of every column of the Spark data source (arrow_columns.c). */
#ifndef BM_ARROW_COLUMNS_H
#define BM_ARROW_COLUMNS_H

#include "buffer.h"

/* arrow_columns(payloads: list[bytes], events_mode: bool, fallback, file_seq) -> (rows, {name: buffers})
 * | None. None: bytes a serializer would not write, or values the columns cannot hold (the caller builds
 * the batch the Python way, which decides). fallback(value_bytes) -> str formats the value kinds left to
 * Python; file_seq(name) -> int is binlog_model.position.file_sequence for names C leaves to Python. */
PyObject *bm_py_arrow_columns(PyObject *self, PyObject *args);

/* Append the canonical proto3 JSON of one serialized Value p[0:n] ({"intValue":5}), byte-identical to
 * binlog_model.spark.value_json.value_json: BM_OK; BM_ERR_DATA for bytes a serializer would not write;
 * BM_ERR_PY with an exception set. fallback(value_bytes) -> str writes the kinds left to Python (FLOAT,
 * GEOMETRY, VECTOR, raw text, JSON diff, an empty Value). Used by jsonl_event.c too. */
int bm_value_json(bm_buf *b, const unsigned char *p, Py_ssize_t n, PyObject *fallback);

/* Readies the buffer type the columns are returned in (module init); -1 with an exception set. */
int bm_arrow_columns_ready(void);

/* The buffer's bytes as a read-only buffer object that takes the memory over (b is left empty). */
PyObject *bm_blob_from_buf(bm_buf *b);

#endif
