/* A serialized BinlogEvent -> its JSON line, byte-identical to json_format's (jsonl_event.c). */
#ifndef BM_JSONL_EVENT_H
#define BM_JSONL_EVENT_H

#include "buffer.h"

/* jsonl_event(data: bytes-like, fallback) -> bytes | None: the event's JSON line ("\n" included) as the
 * JSON lines sink writes it with typed values and no defaults; None for bytes the Python path must decide
 * (see jsonl_event.c). fallback(value_bytes) -> str is the JSON text of the Value kinds left to Python. */
PyObject *bm_py_jsonl_event(PyObject *self, PyObject *args);

#endif
