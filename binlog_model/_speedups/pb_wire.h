/* Reading protobuf wire format: one field at a time, every length checked against the buffer. */
#ifndef BM_PB_WIRE_H
#define BM_PB_WIRE_H

#include "buffer.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* One protobuf field read from [p, end). */
typedef struct {
    uint32_t number;
    int wire;
    uint64_t num;                 /* WT_VARINT */
    const unsigned char *data;    /* WT_LEN, WT_I64, WT_I32 */
    Py_ssize_t len;
} pb_field;

static inline int read_varint(const unsigned char **p, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (*p >= end) return BM_ERR_DATA;
        unsigned char b = *(*p)++;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) { *out = v; return BM_OK; }
    }
    return BM_ERR_DATA;
}

/* The next field at *p (< end), or BM_ERR_DATA for a truncated or group field. */
static inline int read_field(const unsigned char **p, const unsigned char *end, pb_field *f) {
    uint64_t tag;
    if (read_varint(p, end, &tag) != BM_OK || tag >> 3 == 0 || tag >> 3 > 0x1FFFFFFF) return BM_ERR_DATA;
    f->number = (uint32_t)(tag >> 3);
    f->wire = (int)(tag & 7);
    f->data = NULL;
    f->len = 0;
    f->num = 0;
    switch (f->wire) {
    case WT_VARINT:
        return read_varint(p, end, &f->num);
    case WT_I64: case WT_I32: {
        Py_ssize_t n = f->wire == WT_I64 ? 8 : 4;
        if (end - *p < n) return BM_ERR_DATA;
        f->data = *p;
        f->len = n;
        *p += n;
        return BM_OK;
    }
    case WT_LEN: {
        uint64_t n;
        if (read_varint(p, end, &n) != BM_OK || n > (uint64_t)(end - *p)) return BM_ERR_DATA;
        f->data = *p;
        f->len = (Py_ssize_t)n;
        *p += n;
        return BM_OK;
    }
    default:
        return BM_ERR_DATA;
    }
}

#endif
