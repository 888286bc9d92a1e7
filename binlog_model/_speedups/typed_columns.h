/* Serialized BinlogEvents of one table -> its typed Arrow columns (typed_columns.c). */
#ifndef BM_TYPED_COLUMNS_H
#define BM_TYPED_COLUMNS_H

#include "buffer.h"

/* typed_columns(payloads: list[bytes], image: 3 (before) | 4 (after), versions: list[int] (per payload),
 * targets: list[(code, precision, scale)] (per output column), resolve(version, name: bytes) -> int (output
 * column, -1 for none)[, rows: the rows expected, a hint for the buffers' sizes[, contexts: list[(plan,
 * present bitmap)], the raw row images' contexts (plan.h's BM_RAW_ROWS frames, typed by walking the image
 * with the plan)]]) -> (rows, row_event,
 * row_index, [(validity | None, data, offsets | None,
 * [(row, ordinal, value bytes)] | None)], [(row, ordinal, column, name bytes | None)]) | None.
 * None: bytes a serializer would not write (the caller types the batch the Python way). */
PyObject *bm_py_typed_columns(PyObject *self, PyObject *args);

/* event_header(payload: bytes) -> (db, table, operation, rows, file, offset, inner_index | -1, gtid, seconds,
 * nanos, event_index, row_index) | None: a serialized BinlogEvent's own fields and its row count (built rows
 * and raw row images alike), without parsing its rows. None: bytes this reader leaves to protobuf's parser. */
PyObject *bm_py_event_header(PyObject *self, PyObject *arg);

#endif
