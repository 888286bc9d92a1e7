/* A growable byte buffer for protobuf wire output, and the error reporting the C builder uses.
 *
 * Why: the row builder writes each Row's wire bytes into one buffer without a Python object per value.
 * Errors: C code never formats the user-facing message itself. Any decoding problem makes the entry point
 * return "no result" (BM_ERR_DATA), and the Python glue re-runs the pure-Python reference on the same
 * bytes, which raises the typed BinlogError with its exact message and position. So both paths report
 * byte-identical errors by construction. Only MemoryError and TypeError (programming errors) are raised
 * from C directly.
 */
#ifndef BM_BUFFER_H
#define BM_BUFFER_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Return codes of the C builders. */
#define BM_OK 0
#define BM_ERR_DATA -1      /* bad or truncated input: Python re-runs the reference to raise the typed error */
#define BM_ERR_PY -2        /* a Python exception is set (MemoryError) */

typedef struct {
    unsigned char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} bm_buf;

static inline void bm_buf_init(bm_buf *b) { b->data = NULL; b->len = 0; b->cap = 0; }

static inline void bm_buf_free(bm_buf *b) { PyMem_Free(b->data); bm_buf_init(b); }

/* Make room for n more bytes; returns BM_OK or BM_ERR_PY (MemoryError set). */
static inline int bm_buf_reserve(bm_buf *b, Py_ssize_t n) {
    if (n < 0 || b->len > PY_SSIZE_T_MAX - n) { PyErr_NoMemory(); return BM_ERR_PY; }
    if (b->len + n <= b->cap) return BM_OK;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) {
        if (cap > PY_SSIZE_T_MAX / 2) { cap = b->len + n; break; }
        cap *= 2;
    }
    unsigned char *p = PyMem_Realloc(b->data, (size_t)cap);
    if (!p) { PyErr_NoMemory(); return BM_ERR_PY; }
    b->data = p;
    b->cap = cap;
    return BM_OK;
}

static inline int bm_buf_put(bm_buf *b, const void *src, Py_ssize_t n) {
    if (bm_buf_reserve(b, n) != BM_OK) return BM_ERR_PY;
    if (n) memcpy(b->data + b->len, src, (size_t)n);
    b->len += n;
    return BM_OK;
}

static inline int bm_buf_byte(bm_buf *b, unsigned char c) {
    if (b->len >= b->cap && bm_buf_reserve(b, 1) != BM_OK) return BM_ERR_PY;
    b->data[b->len++] = c;
    return BM_OK;
}

/* A protobuf base-128 varint. */
static inline int bm_buf_varint(bm_buf *b, uint64_t v) {
    if (b->cap - b->len < 10 && bm_buf_reserve(b, 10) != BM_OK) return BM_ERR_PY;
    unsigned char *p = b->data + b->len;
    while (v >= 0x80) { *p++ = (unsigned char)(v | 0x80); v >>= 7; }
    *p++ = (unsigned char)v;
    b->len = p - b->data;
    return BM_OK;
}

/* The decimal digits of v (what "%llu" writes), without the printf machinery: numbers are written per
 * value (JSON documents, typed string columns, proto3 JSON). */
static inline int bm_buf_u64(bm_buf *b, uint64_t v) {
    char tmp[20];
    int n = 0;
    do { tmp[sizeof tmp - ++n] = (char)('0' + v % 10); v /= 10; } while (v);
    return bm_buf_put(b, tmp + sizeof tmp - n, n);
}

/* The same for a signed v (what "%lld" writes). */
static inline int bm_buf_i64(bm_buf *b, int64_t v) {
    if (v >= 0) return bm_buf_u64(b, (uint64_t)v);
    if (bm_buf_byte(b, '-') != BM_OK) return BM_ERR_PY;
    return bm_buf_u64(b, (uint64_t)0 - (uint64_t)v);      /* no overflow at INT64_MIN */
}

/* Bytes a varint takes. */
static inline int bm_varint_size(uint64_t v) {
    int n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}

#endif
