/* Serialized BinlogEvents -> Arrow buffers of the Spark data source's map columns (arrow_maps.c). */
#ifndef BM_ARROW_MAPS_H
#define BM_ARROW_MAPS_H

#include "buffer.h"

/* arrow_maps(payloads: list[bytes], events_mode: bool, fallback) -> (rows, row_index, maps) | None.
 * row_index: int64 per output row; maps: (validity | None, offsets, entries, key_offsets, keys,
 * value_offsets, values) for primaryKey, before, after; None: bytes a serializer would not write (the
 * caller builds the batch the Python way). fallback(value_bytes) -> str formats the kinds left to Python. */
PyObject *bm_py_arrow_maps(PyObject *self, PyObject *args);

#endif
