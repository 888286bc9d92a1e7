/* The compiled form of a RowPlan: per column, the wire codec to read the value with and the model kind to
 * write it as. Built once per plan by compile_plan (module.c); read by the row builder (rows.c). */
#ifndef BM_PLAN_H
#define BM_PLAN_H

#include "buffer.h"

/* Model kinds: the numbers of binlog_model.resolve.plan.PlanKind. */
enum {
    K_INT = 1, K_LONG, K_UINT64, K_DECIMAL, K_FLOAT, K_DOUBLE, K_TEXT, K_ENUM, K_SET, K_BYTES, K_BIT,
    K_DATE, K_DATETIME, K_TIMESTAMP, K_TIME, K_JSON, K_GEOMETRY, K_VECTOR
};

/* Wire codecs (what binlog_model.wire.codecs.dispatch.codec_for picks for a TABLE_MAP column). */
enum {
    W_TINY = 1, W_SHORT, W_INT24, W_LONG, W_LONGLONG, W_FLOAT, W_DOUBLE, W_NEWDECIMAL, W_YEAR, W_BIT,
    W_DATE, W_TIME, W_TIME2, W_DATETIME, W_DATETIME2, W_TIMESTAMP, W_TIMESTAMP2,
    W_VARLEN,      /* VARCHAR/CHAR/BLOB: little-endian length prefix of wmeta bytes, then the bytes */
    W_ENUM, W_SET, /* wmeta: storage bytes */
    W_GEOMETRY, W_VECTOR, W_JSON /* wmeta: length-prefix bytes */
};

/* Text charsets handled in C; any other makes the plan fall back to Python. */
enum { CS_UTF8 = 1, CS_LATIN1, CS_ASCII, CS_NONE /* "binary": never text, always raw_text_value */ };

typedef struct {
    const char *ptr;
    Py_ssize_t len;
} bm_str;

typedef struct {
    int kind;
    int wire;
    int wmeta;              /* length-prefix bytes, storage bytes, fsp, BIT bytes, DECIMAL precision */
    int scale;              /* DECIMAL scale */
    int wire_unsigned;      /* the wire codec reads the integer unsigned (TABLE_MAP signedness) */
    int offset_bits;        /* tracked unsigned: add 1 << bits to a negative value (0: never) */
    int charset;            /* CS_* for K_TEXT */
    int pad_to;
    int mark;               /* 0 user, 1 invisible, 2 hidden */
    bm_str name;            /* UTF-8 */
    bm_str charset_name;    /* the RawText charset */
    Py_ssize_t nlabels;
    bm_str *labels;         /* ENUM: index 0 is ""; SET: the members */
} bm_col;

typedef struct {
    PyObject_HEAD
    Py_ssize_t ncols;
    bm_col *cols;
    Py_ssize_t npk;
    Py_ssize_t *pk;
    Py_ssize_t nalways;
    Py_ssize_t *always;
    PyObject *keep;         /* the bytes objects the bm_str pointers point into */
} bm_plan;

/* rows.c */
PyObject *bm_build_rows(bm_plan *plan, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end,
                        const unsigned char *present, Py_ssize_t present_len,
                        const unsigned char *present_after, Py_ssize_t present_after_len,
                        int operation, int image_mode, uint64_t first_row_index);

/* The resolve job's raw row images (rows.c, typed_columns.c): inside one process, the rows of a rows event
 * as the bytes of the image a typed table reads, each a framed entry of this BinlogEvent field number (not
 * in the .proto: such events never leave the process), holding [context][row_index][image bytes]. The
 * context numbers a (plan, present-columns bitmap) pair the process registered. */
#define BM_RAW_ROWS 100
#define BM_RAW_ROWS_TAG ((BM_RAW_ROWS << 3) | 2)

/* The rows of one event as raw frames of the typed image (INSERT: after, UPDATE: after, DELETE: before),
 * each length checked as build_rows checks it (JSON documents are not rendered: bm_walk_image does): (list
 * of frames, end position), or None for bytes build_rows would refuse. */
PyObject *bm_row_images(bm_plan *plan, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end,
                        const unsigned char *present, Py_ssize_t present_len,
                        const unsigned char *present_after, Py_ssize_t present_after_len,
                        int operation, Py_ssize_t context, uint64_t first_row_index);

/* Walking one raw image: every column build_rows's put_all writes, in its order: NULL, or its logged bytes
 * (a MySQL binary JSON value also as its rendered text). bm_entry_value writes the Value bytes build_rows
 * writes for it. */
typedef struct {
    const bm_col *col;
    int null;
    const unsigned char *raw;
    Py_ssize_t size;
    const unsigned char *json;
    Py_ssize_t json_len;
} bm_entry;
typedef struct bm_walker bm_walker;
typedef int (*bm_entry_fn)(void *arg, const bm_entry *entry);
int bm_entry_value(const bm_entry *e, bm_buf *out);
bm_walker *bm_walker_new(void);
void bm_walker_free(bm_walker *w);
int bm_walk_image(bm_walker *w, bm_plan *plan, const unsigned char *image, Py_ssize_t len,
                  const unsigned char *present, Py_ssize_t present_len, bm_entry_fn fn, void *arg);

/* module.c: whether o is a compiled plan. */
int bm_is_plan(PyObject *o);

#endif
