/* Reading one logged value and writing its protobuf Value bytes (values.c). */
#ifndef BM_VALUES_H
#define BM_VALUES_H

#include "plan.h"

/* Bytes of the DECIMAL(precision, scale) packed form. */
Py_ssize_t bm_decimal_size(int precision, int scale);

/* The byte size of the value of column c at p, with avail bytes left in the image: BM_OK or BM_ERR_DATA
 * (truncated; a length prefix is checked against avail, never trusted). */
int bm_value_size(const bm_col *c, const unsigned char *p, Py_ssize_t avail, Py_ssize_t *size);

/* Append the Value's oneof field (tag + payload) for the value at p[0:size]. */
int bm_put_value(const bm_col *c, const unsigned char *p, Py_ssize_t size, bm_buf *out);

/* Value { null_value: NULL_VALUE }. */
int bm_put_null(bm_buf *out);

/* The model values bm_put_value writes, for the resolve job's typing of raw row images (typed_columns.c):
 * an integer column's value (its wire codec, the tracked UNSIGNED applied; BM_ERR_DATA for a codec that is
 * not an integer's), a DECIMAL's exact text (BM_ERR_DATA for a corrupt digit group), a DATETIME's seven fields (BM_ERR_DATA past 9999-12-31 23:59:59), a TIME's and a
 * TIMESTAMP's microseconds (0: the zero TIMESTAMP). */
int bm_read_int(const bm_col *c, const unsigned char *p, __int128 *out);
#define BM_DECIMAL_TEXT 200     /* room for a DECIMAL's text (at most 65 digits, a sign and a point) */
int bm_decimal_text(const bm_col *c, const unsigned char *p, char *text, Py_ssize_t *tlen);
int bm_datetime_fields(const bm_col *c, const unsigned char *p, uint64_t *f);
int64_t bm_time_micros(const bm_col *c, const unsigned char *p);
int64_t bm_timestamp_micros(const bm_col *c, const unsigned char *p);

/* 1 when an UPDATE changed the (non-NULL) value, 0 when not; sa/sb are scratch buffers. */
int bm_values_differ(const bm_col *c, const unsigned char *a, Py_ssize_t na, const unsigned char *b,
                     Py_ssize_t nb, bm_buf *sa, bm_buf *sb);

#endif
