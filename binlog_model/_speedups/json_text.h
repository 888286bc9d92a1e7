/* MySQL's binary JSON -> JSON text, byte-identical to the Python reference (json_text.c). */
#ifndef BM_JSON_TEXT_H
#define BM_JSON_TEXT_H

#include "buffer.h"
#include "utf8.h"

/* Append the JSON text of one MySQL JSON binary document buf[0:len] to out, exactly as
 * JsonDocument(parse_json_binary(buf)).to_json() renders it. BM_OK; BM_ERR_DATA for a document the
 * reference would refuse, or one this code leaves to the reference (DECIMAL and temporal opaques,
 * objects whose keys are not in MySQL's sorted order); BM_ERR_PY with MemoryError set. On an error, out
 * keeps what was appended so far: the caller discards it. Never reads outside buf[0:len]. */
int bm_json_to_text(const unsigned char *buf, Py_ssize_t len, bm_buf *out);

/* Append s[0:n] (UTF-8) as a JSON string literal, escaped as json.dumps(s, ensure_ascii=False) does:
 * BM_OK; BM_ERR_DATA when s is not valid UTF-8; BM_ERR_PY with MemoryError set. */
int bm_put_json_string(bm_buf *out, const unsigned char *s, Py_ssize_t n);

/* json_text(data: bytes-like) -> str | None (None: the reference must decide). For tests and fuzzing. */
PyObject *bm_py_json_text(PyObject *self, PyObject *arg);

#endif
