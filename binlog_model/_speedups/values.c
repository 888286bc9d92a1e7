/* One logged value -> the wire bytes of its protobuf ``Value`` (the oneof field: tag and payload).
 *
 * Mirrors binlog_model/wire/codecs (reading) and resolve/convert.py (the setters) value kind by value kind.
 * Every read is bounded by the value's span, which value_size() checked against the image first. Whatever
 * Python would reject (an out-of-range integer for the model type, an ENUM index beyond the labels, a corrupt
 * DECIMAL digit group...) returns BM_ERR_DATA: the caller then runs the Python reference on the event.
 */
#include "values.h"
#include "proto_fields.h"
#include "utf8.h"

#include <math.h>

static const unsigned char DIG2BYTES[10] = {0, 1, 1, 2, 2, 3, 3, 4, 4, 4};
static const unsigned char FRAC_BYTES[7] = {0, 1, 1, 2, 2, 3, 3};
static const uint32_t POW10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
                                   1000000000};

/* MySQL latin1 is cp1252 with its five holes filled by the C1 controls of the same number (charsets.py). */
static const uint16_t CP1252_80[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

Py_ssize_t bm_decimal_size(int precision, int scale) {
    int intg = precision - scale;
    return (intg / 9) * 4 + DIG2BYTES[intg % 9] + (scale / 9) * 4 + DIG2BYTES[scale % 9];
}

static inline uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

static inline uint64_t be(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

int bm_value_size(const bm_col *c, const unsigned char *p, Py_ssize_t avail, Py_ssize_t *size) {
    Py_ssize_t n;
    switch (c->wire) {
    case W_TINY: case W_YEAR: n = 1; break;
    case W_SHORT: n = 2; break;
    case W_INT24: case W_DATE: case W_TIME: n = 3; break;
    case W_LONG: case W_FLOAT: case W_TIMESTAMP: n = 4; break;
    case W_LONGLONG: case W_DOUBLE: case W_DATETIME: n = 8; break;
    case W_NEWDECIMAL: n = bm_decimal_size(c->wmeta, c->scale); break;
    case W_BIT: case W_ENUM: case W_SET: n = c->wmeta; break;
    case W_TIME2: n = 3 + FRAC_BYTES[c->wmeta]; break;
    case W_DATETIME2: n = 5 + FRAC_BYTES[c->wmeta]; break;
    case W_TIMESTAMP2: n = 4 + FRAC_BYTES[c->wmeta]; break;
    case W_VARLEN: case W_GEOMETRY: case W_VECTOR: case W_JSON: {
        int w = c->wmeta;
        if (avail < w) return BM_ERR_DATA;
        uint64_t len = le(p, w);
        if (len > (uint64_t)(avail - w)) return BM_ERR_DATA;
        /* Values the Python codecs reject while decoding: a GEOMETRY without its SRID, a VECTOR that is
         * not whole float32s. */
        if ((c->wire == W_GEOMETRY && len < 4) || (c->wire == W_VECTOR && len % 4)) return BM_ERR_DATA;
        *size = w + (Py_ssize_t)len;
        return BM_OK;
    }
    default: return BM_ERR_DATA;
    }
    if (avail < n) return BM_ERR_DATA;
    /* An old-format DATETIME this large is MariaDB's pre-10.1 DATETIME(n): the Python codec rejects it. */
    if (c->wire == W_DATETIME && le(p, 8) > 99991231235959ull) return BM_ERR_DATA;
    *size = n;
    return BM_OK;
}

/* -- wire helpers ----------------------------------------------------------------------------------- */

static inline int put_len_field(bm_buf *b, const unsigned char *tag, int taglen, const void *data,
                                Py_ssize_t n) {
    if (bm_buf_put(b, tag, taglen) || bm_buf_varint(b, (uint64_t)n) || bm_buf_put(b, data, n))
        return BM_ERR_PY;
    return BM_OK;
}

static inline int put_varint_field(bm_buf *b, const unsigned char *tag, int taglen, uint64_t v) {
    if (bm_buf_put(b, tag, taglen) || bm_buf_varint(b, v)) return BM_ERR_PY;
    return BM_OK;
}

/* The tags of Value's oneof members (proto_fields.h, generated from the descriptor). */
static const unsigned char T_NULL[] = {PB_VALUE_NULL_VALUE_TAG}, T_INT[] = {PB_VALUE_INT_VALUE_TAG},
    T_LONG[] = {PB_VALUE_LONG_VALUE_TAG}, T_STRING[] = {PB_VALUE_STRING_VALUE_TAG},
    T_BYTES[] = {PB_VALUE_BYTES_VALUE_TAG}, T_DECIMAL[] = {PB_VALUE_DECIMAL_VALUE_TAG},
    T_DOUBLE[] = {PB_VALUE_DOUBLE_VALUE_TAG}, T_FLOAT[] = {PB_VALUE_FLOAT_VALUE_TAG},
    T_DATETIME[] = {PB_VALUE_DATETIME_VALUE_TAG}, T_DATE[] = {PB_VALUE_DATE_VALUE_TAG},
    T_TIMESTAMP[] = {PB_VALUE_TIMESTAMP_MICROS_TAG}, T_TIME[] = {PB_VALUE_TIME_MICROS_TAG},
    T_UINT64[] = {PB_VALUE_UINT64_VALUE_TAG}, T_JSON[] = {PB_VALUE_JSON_VALUE_TAG},
    T_SET[] = {PB_VALUE_SET_VALUE_TAG},
    T_BIT[] = {PB_VALUE_BIT_VALUE_TAG}, T_GEOMETRY[] = {PB_VALUE_GEOMETRY_VALUE_TAG},
    T_VECTOR[] = {PB_VALUE_VECTOR_VALUE_TAG}, T_RAW[] = {PB_VALUE_RAW_TEXT_VALUE_TAG};
#define TAGLEN(tag) ((int)sizeof(tag))

/* put_date_fields writes Date and DateTime as their fields 1..n in order, each a varint of one tag byte. */
_Static_assert(PB_DATE_YEAR == 1 && PB_DATE_MONTH == 2 && PB_DATE_DAY == 3 && PB_DATE_MAX_FIELD == 3 &&
               PB_DATE_YEAR_WIRE == 0 && PB_DATE_MONTH_WIRE == 0 && PB_DATE_DAY_WIRE == 0,
               "Date is no longer {1 year, 2 month, 3 day} varints: put_date_fields must follow");
_Static_assert(PB_DATE_TIME_YEAR == 1 && PB_DATE_TIME_MONTH == 2 && PB_DATE_TIME_DAY == 3 &&
               PB_DATE_TIME_HOUR == 4 && PB_DATE_TIME_MINUTE == 5 && PB_DATE_TIME_SECOND == 6 &&
               PB_DATE_TIME_MICROS == 7 && PB_DATE_TIME_MAX_FIELD == 7 && PB_DATE_TIME_YEAR_WIRE == 0 &&
               PB_DATE_TIME_MONTH_WIRE == 0 && PB_DATE_TIME_DAY_WIRE == 0 && PB_DATE_TIME_HOUR_WIRE == 0 &&
               PB_DATE_TIME_MINUTE_WIRE == 0 && PB_DATE_TIME_SECOND_WIRE == 0 && PB_DATE_TIME_MICROS_WIRE == 0,
               "DateTime is no longer fields 1..7 (year..micros) as varints: put_date_fields must follow");

int bm_put_null(bm_buf *out) {
    static const unsigned char v[] = {PB_VALUE_NULL_VALUE_TAG, 0x00};     /* NULL_VALUE is 0 */
    (void)T_NULL;
    return bm_buf_put(out, v, (Py_ssize_t)sizeof v);
}

/* A float read as Python does: float32 -> double -> float32 (a signalling NaN comes out quiet). */
static inline uint32_t float_bits(const unsigned char *p) {
    uint32_t bits = (uint32_t)le(p, 4);
    if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu)) bits |= 0x00400000u;
    return bits;
}

static inline double float_value(const unsigned char *p) {
    uint32_t bits = (uint32_t)le(p, 4);
    float f;
    memcpy(&f, &bits, 4);
    return (double)f;
}

static inline double double_value(const unsigned char *p) {
    uint64_t bits = le(p, 8);
    double d;
    memcpy(&d, &bits, 8);
    return d;
}

/* -- integers --------------------------------------------------------------------------------------- */

int bm_read_int(const bm_col *c, const unsigned char *p, __int128 *out) {
    __int128 v;
    int u = c->wire_unsigned;
    switch (c->wire) {
    case W_TINY: v = u ? (__int128)p[0] : (__int128)(int8_t)p[0]; break;
    case W_SHORT: v = u ? (__int128)(uint16_t)le(p, 2) : (__int128)(int16_t)(uint16_t)le(p, 2); break;
    case W_INT24: {
        uint32_t x = (uint32_t)le(p, 3);
        v = (!u && (x & 0x800000u)) ? (__int128)x - 0x1000000 : (__int128)x;
        break;
    }
    case W_LONG: v = u ? (__int128)(uint32_t)le(p, 4) : (__int128)(int32_t)(uint32_t)le(p, 4); break;
    case W_LONGLONG: v = u ? (__int128)le(p, 8) : (__int128)(int64_t)le(p, 8); break;
    case W_YEAR: v = p[0] ? 1900 + p[0] : 0; break;
    default: return BM_ERR_DATA;
    }
    if (v < 0 && c->offset_bits) v += (__int128)1 << c->offset_bits;
    *out = v;
    return BM_OK;
}

static int put_int(const bm_col *c, const unsigned char *p, bm_buf *out) {
    __int128 v;
    if (bm_read_int(c, p, &v)) return BM_ERR_DATA;
    switch (c->kind) {
    case K_INT:
        if (v < INT32_MIN || v > INT32_MAX) return BM_ERR_DATA;
        return put_varint_field(out, T_INT, TAGLEN(T_INT), (uint64_t)(int64_t)v);
    case K_LONG:
        if (v < INT64_MIN || v > INT64_MAX) return BM_ERR_DATA;
        return put_varint_field(out, T_LONG, TAGLEN(T_LONG), (uint64_t)(int64_t)v);
    default: /* K_UINT64 */
        if (v < 0 || v > (__int128)UINT64_MAX) return BM_ERR_DATA;
        return put_varint_field(out, T_UINT64, TAGLEN(T_UINT64), (uint64_t)v);
    }
}

/* -- DECIMAL ---------------------------------------------------------------------------------------- */

/* The exact plain text of a packed DECIMAL, as format(Decimal, "f") with no negative zero. A digit group
 * holding more than its digits (corrupt bytes) is BM_ERR_DATA: Python keeps such values its own way. */
/* n decimal digits of v, zero-padded on the left. */
static int put_digits(char *out, uint32_t v, int n) {
    for (int i = n - 1; i >= 0; i--) {
        out[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return n;
}

int bm_decimal_text(const bm_col *c, const unsigned char *p, char *text, Py_ssize_t *tlen) {
    int precision = c->wmeta, scale = c->scale, intg = precision - scale;
    Py_ssize_t n = bm_decimal_size(precision, scale);
    unsigned char d[40];
    if (n <= 0 || n > (Py_ssize_t)sizeof d) return BM_ERR_DATA;
    memcpy(d, p, (size_t)n);
    int negative = !(d[0] & 0x80);
    d[0] ^= 0x80;
    if (negative)
        for (Py_ssize_t i = 0; i < n; i++) d[i] ^= 0xff;
    char digits[100];
    int nd = 0, pos = 0;
    int lead = intg % 9;
    if (lead) {
        uint32_t g = (uint32_t)be(d + pos, DIG2BYTES[lead]);
        pos += DIG2BYTES[lead];
        if (g >= POW10[lead]) return BM_ERR_DATA;
        nd += put_digits(digits + nd, g, lead);   /* leading zeros are stripped below */
    }
    for (int i = 0; i < intg / 9; i++) {
        uint32_t g = (uint32_t)be(d + pos, 4);
        pos += 4;
        if (g >= 1000000000u) return BM_ERR_DATA;
        nd += put_digits(digits + nd, g, 9);
    }
    /* The whole part is an integer: no leading zeros, "0" when empty or zero. */
    int skip = 0;
    while (skip < nd - 1 && digits[skip] == '0') skip++;
    int allzero = 1;
    char *t = text;
    char frac[100];
    int nf = 0;
    for (int i = 0; i < scale / 9; i++) {
        uint32_t g = (uint32_t)be(d + pos, 4);
        pos += 4;
        if (g >= 1000000000u) return BM_ERR_DATA;
        nf += put_digits(frac + nf, g, 9);
    }
    int tail = scale % 9;
    if (tail) {
        uint32_t g = (uint32_t)be(d + pos, DIG2BYTES[tail]);
        if (g >= POW10[tail]) return BM_ERR_DATA;
        nf += put_digits(frac + nf, g, tail);
    }
    for (int i = 0; i < nd; i++)
        if (digits[i] != '0') allzero = 0;
    for (int i = 0; i < nf; i++)
        if (frac[i] != '0') allzero = 0;
    if (negative && !allzero) *t++ = '-';
    if (nd == 0) {
        *t++ = '0';
    } else {
        memcpy(t, digits + skip, (size_t)(nd - skip));
        t += nd - skip;
    }
    if (scale) {
        *t++ = '.';
        memcpy(t, frac, (size_t)nf);
        t += nf;
    }
    *tlen = t - text;
    return BM_OK;
}

/* -- temporals -------------------------------------------------------------------------------------- */

static int put_date_fields(bm_buf *out, const unsigned char *tag, int taglen, uint64_t *f, int nf) {
    /* Date/DateTime message: fields 1..nf, each a varint written only when nonzero. */
    Py_ssize_t body = 0;
    for (int i = 0; i < nf; i++)
        if (f[i]) body += 1 + bm_varint_size(f[i]);
    if (bm_buf_put(out, tag, taglen) || bm_buf_varint(out, (uint64_t)body)) return BM_ERR_PY;
    for (int i = 0; i < nf; i++)
        if (f[i] && (bm_buf_byte(out, (unsigned char)((i + 1) << 3)) || bm_buf_varint(out, f[i])))
            return BM_ERR_PY;
    return BM_OK;
}

static inline int64_t read_frac(const unsigned char *p, int nfrac) {
    if (nfrac == 1) return (int64_t)p[0] * 10000;
    if (nfrac == 2) return (int64_t)be(p, 2) * 100;
    if (nfrac == 3) return (int64_t)be(p, 3);
    return 0;
}

int bm_datetime_fields(const bm_col *c, const unsigned char *p, uint64_t *f) {
    if (c->wire == W_DATETIME) {
        uint64_t v = le(p, 8);
        if (v > 99991231235959ull) return BM_ERR_DATA;
        uint64_t d = v / 1000000, t = v % 1000000;
        f[0] = d / 10000; f[1] = (d / 100) % 100; f[2] = d % 100;
        f[3] = t / 10000; f[4] = (t / 100) % 100; f[5] = t % 100; f[6] = 0;
    } else {
        int64_t intpart = (int64_t)be(p, 5) - 0x8000000000ll;
        int64_t packed = intpart * (1ll << 24) + read_frac(p + 5, FRAC_BYTES[c->wmeta]);
        uint64_t up = packed < 0 ? (uint64_t)0 - (uint64_t)packed : (uint64_t)packed;
        uint64_t ip = up >> 24, micro = up & 0xFFFFFF;
        uint64_t ymd = ip >> 17, hms = ip & 0x1FFFF, ym = ymd >> 5;
        f[0] = ym / 13; f[1] = ym % 13; f[2] = ymd & 31;
        f[3] = hms >> 12; f[4] = (hms >> 6) & 63; f[5] = hms & 63; f[6] = micro;
    }
    return BM_OK;
}

static int put_datetime(const bm_col *c, const unsigned char *p, bm_buf *out) {
    uint64_t f[7];
    if (bm_datetime_fields(c, p, f)) return BM_ERR_DATA;
    return put_date_fields(out, T_DATETIME, TAGLEN(T_DATETIME), f, 7);
}

static int64_t time_from_packed(int64_t packed) {
    uint64_t up = packed < 0 ? (uint64_t)0 - (uint64_t)packed : (uint64_t)packed;
    uint64_t hms = up >> 24, micro = up & 0xFFFFFF;
    uint64_t hours = (hms >> 12) & 0x3FF;
    int64_t total = (int64_t)((hours * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63)) * 1000000 + micro);
    return packed < 0 ? -total : total;
}

int64_t bm_time_micros(const bm_col *c, const unsigned char *p) {
    if (c->wire == W_TIME) {
        int32_t v = (int32_t)le(p, 3);
        if (v & 0x800000) v -= 0x1000000;
        int neg = v < 0;
        if (neg) v = -v;
        int64_t total = ((int64_t)(v / 10000) * 3600 + (int64_t)((v / 100) % 100) * 60 + v % 100) * 1000000;
        return neg ? -total : total;
    }
    int nfrac = FRAC_BYTES[c->wmeta];
    if (nfrac == 3) return time_from_packed((int64_t)be(p, 6) - 0x800000000000ll);
    int64_t intpart = (int64_t)be(p, 3) - 0x800000;
    if (nfrac == 0) return time_from_packed(intpart * (1ll << 24));
    int64_t frac;
    if (nfrac == 1) {
        frac = p[3];
        if (intpart < 0 && frac) { intpart += 1; frac -= 0x100; }
        return time_from_packed(intpart * (1ll << 24) + frac * 10000);
    }
    frac = (int64_t)be(p + 3, 2);
    if (intpart < 0 && frac) { intpart += 1; frac -= 0x10000; }
    return time_from_packed(intpart * (1ll << 24) + frac * 100);
}

int64_t bm_timestamp_micros(const bm_col *c, const unsigned char *p) {
    uint64_t seconds;
    int64_t micro = 0;
    if (c->wire == W_TIMESTAMP) {
        seconds = le(p, 4);
    } else {
        seconds = be(p, 4);
        micro = read_frac(p + 4, FRAC_BYTES[c->wmeta]);
    }
    if (seconds == 0) return 0;   /* the zero TIMESTAMP, whatever its fraction */
    return (int64_t)seconds * 1000000 + micro;
}

/* -- text ------------------------------------------------------------------------------------------- */

static int put_raw_text(const bm_col *c, const unsigned char *s, Py_ssize_t n, bm_buf *out) {
    static const unsigned char t1[] = {PB_RAW_TEXT_DATA_TAG}, t2[] = {PB_RAW_TEXT_CHARSET_TAG};
    Py_ssize_t body = 0;
    if (n) body += TAGLEN(t1) + bm_varint_size((uint64_t)n) + n;
    if (c->charset_name.len)
        body += TAGLEN(t2) + bm_varint_size((uint64_t)c->charset_name.len) + c->charset_name.len;
    if (bm_buf_put(out, T_RAW, TAGLEN(T_RAW)) || bm_buf_varint(out, (uint64_t)body)) return BM_ERR_PY;
    if (n && put_len_field(out, t1, TAGLEN(t1), s, n)) return BM_ERR_PY;
    if (c->charset_name.len && put_len_field(out, t2, TAGLEN(t2), c->charset_name.ptr, c->charset_name.len))
        return BM_ERR_PY;
    return BM_OK;
}

static int put_text(const bm_col *c, const unsigned char *s, Py_ssize_t n, bm_buf *out) {
    switch (c->charset) {
    case CS_UTF8:
        if (bm_utf8_valid(s, n)) return put_len_field(out, T_STRING, TAGLEN(T_STRING), s, n);
        return put_raw_text(c, s, n, out);
    case CS_ASCII:
        for (Py_ssize_t i = 0; i < n; i++)
            if (s[i] >= 0x80) return put_raw_text(c, s, n, out);
        return put_len_field(out, T_STRING, TAGLEN(T_STRING), s, n);
    case CS_LATIN1: {
        Py_ssize_t u = 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned cp = s[i] >= 0x80 && s[i] < 0xA0 ? CP1252_80[s[i] - 0x80] : s[i];
            u += cp < 0x80 ? 1 : cp < 0x800 ? 2 : 3;
        }
        if (bm_buf_put(out, T_STRING, TAGLEN(T_STRING)) || bm_buf_varint(out, (uint64_t)u) ||
            bm_buf_reserve(out, u))
            return BM_ERR_PY;
        unsigned char *w = out->data + out->len;
        for (Py_ssize_t i = 0; i < n; i++) {
            unsigned cp = s[i] >= 0x80 && s[i] < 0xA0 ? CP1252_80[s[i] - 0x80] : s[i];
            if (cp < 0x80) {
                *w++ = (unsigned char)cp;
            } else if (cp < 0x800) {
                *w++ = (unsigned char)(0xC0 | (cp >> 6));
                *w++ = (unsigned char)(0x80 | (cp & 0x3F));
            } else {
                *w++ = (unsigned char)(0xE0 | (cp >> 12));
                *w++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
                *w++ = (unsigned char)(0x80 | (cp & 0x3F));
            }
        }
        out->len += u;
        return BM_OK;
    }
    default: /* CS_NONE: no faithful codec */
        return put_raw_text(c, s, n, out);
    }
}

/* -- the dispatcher --------------------------------------------------------------------------------- */

int bm_put_value(const bm_col *c, const unsigned char *p, Py_ssize_t size, bm_buf *out) {
    switch (c->kind) {
    case K_INT: case K_LONG: case K_UINT64:
        return put_int(c, p, out);
    case K_DECIMAL: {
        char text[BM_DECIMAL_TEXT];
        Py_ssize_t n;
        if (bm_decimal_text(c, p, text, &n)) return BM_ERR_DATA;
        return put_len_field(out, T_DECIMAL, TAGLEN(T_DECIMAL), text, n);
    }
    case K_FLOAT: {
        uint32_t bits = float_bits(p);
        unsigned char b[4] = {(unsigned char)bits, (unsigned char)(bits >> 8), (unsigned char)(bits >> 16),
                              (unsigned char)(bits >> 24)};
        if (bm_buf_put(out, T_FLOAT, TAGLEN(T_FLOAT)) || bm_buf_put(out, b, 4)) return BM_ERR_PY;
        return BM_OK;
    }
    case K_DOUBLE:
        if (bm_buf_put(out, T_DOUBLE, TAGLEN(T_DOUBLE)) || bm_buf_put(out, p, 8)) return BM_ERR_PY;
        return BM_OK;
    case K_TEXT: {
        int w = c->wmeta;
        return put_text(c, p + w, size - w, out);
    }
    case K_BYTES: {
        int w = c->wmeta;
        Py_ssize_t n = size - w;
        Py_ssize_t total = n < c->pad_to ? c->pad_to : n;
        if (bm_buf_put(out, T_BYTES, TAGLEN(T_BYTES)) || bm_buf_varint(out, (uint64_t)total) ||
            bm_buf_put(out, p + w, n))
            return BM_ERR_PY;
        if (total > n) {
            if (bm_buf_reserve(out, total - n)) return BM_ERR_PY;
            memset(out->data + out->len, 0, (size_t)(total - n));
            out->len += total - n;
        }
        return BM_OK;
    }
    case K_ENUM: {
        uint64_t idx = le(p, c->wmeta);
        if (idx >= (uint64_t)c->nlabels) return BM_ERR_DATA;
        return put_len_field(out, T_STRING, TAGLEN(T_STRING), c->labels[idx].ptr, c->labels[idx].len);
    }
    case K_SET: {
        uint64_t mask = le(p, c->wmeta);
        if (c->nlabels < 64 && (mask >> c->nlabels)) return BM_ERR_DATA;
        static const unsigned char t1[] = {PB_SET_VALUE_LABELS_TAG};
        Py_ssize_t body = 0;
        for (Py_ssize_t i = 0; i < c->nlabels && i < 64; i++)
            if (mask >> i & 1)
                body += TAGLEN(t1) + bm_varint_size((uint64_t)c->labels[i].len) + c->labels[i].len;
        if (bm_buf_put(out, T_SET, TAGLEN(T_SET)) || bm_buf_varint(out, (uint64_t)body)) return BM_ERR_PY;
        for (Py_ssize_t i = 0; i < c->nlabels && i < 64; i++)
            if (mask >> i & 1 && put_len_field(out, t1, TAGLEN(t1), c->labels[i].ptr, c->labels[i].len))
                return BM_ERR_PY;
        return BM_OK;
    }
    case K_BIT: {
        int n = c->wmeta;
        for (int i = 0; i < n - 8; i++)
            if (p[i]) return BM_ERR_DATA;  /* more than 64 bits: Python rejects it */
        int skip = n > 8 ? n - 8 : 0;
        return put_varint_field(out, T_BIT, TAGLEN(T_BIT), be(p + skip, n - skip));
    }
    case K_DATE: {
        uint32_t v = (uint32_t)le(p, 3);
        uint64_t f[3] = {v >> 9, (v >> 5) & 15, v & 31};
        return put_date_fields(out, T_DATE, TAGLEN(T_DATE), f, 3);
    }
    case K_DATETIME:
        return put_datetime(c, p, out);
    case K_TIMESTAMP:
        return put_varint_field(out, T_TIMESTAMP, TAGLEN(T_TIMESTAMP), (uint64_t)bm_timestamp_micros(c, p));
    case K_TIME:
        return put_varint_field(out, T_TIME, TAGLEN(T_TIME), (uint64_t)bm_time_micros(c, p));
    case K_JSON: {
        /* MariaDB's JSON is LONGTEXT: UTF-8 text as json_value, else kept as utf8mb4 raw_text_value.
         * (MySQL's binary JSON is rendered by rows.c with json_text.c.) */
        static const bm_col utf8mb4 = {.charset_name = {"utf8mb4", 7}};
        int w = c->wmeta;
        if (c->wire != W_VARLEN) return BM_ERR_DATA;
        if (bm_utf8_valid(p + w, size - w)) return put_len_field(out, T_JSON, TAGLEN(T_JSON), p + w, size - w);
        return put_raw_text(&utf8mb4, p + w, size - w, out);
    }
    case K_GEOMETRY: {
        int w = c->wmeta;
        Py_ssize_t n = size - w;
        if (n < 4) return BM_ERR_DATA;
        uint32_t srid = (uint32_t)le(p + w, 4);
        Py_ssize_t wkb = n - 4;
        static const unsigned char t1[] = {PB_GEOMETRY_SRID_TAG}, t2[] = {PB_GEOMETRY_WKB_TAG};
        Py_ssize_t body = (srid ? TAGLEN(t1) + bm_varint_size(srid) : 0) +
                          (wkb ? TAGLEN(t2) + bm_varint_size((uint64_t)wkb) + wkb : 0);
        if (bm_buf_put(out, T_GEOMETRY, TAGLEN(T_GEOMETRY)) || bm_buf_varint(out, (uint64_t)body))
            return BM_ERR_PY;
        if (srid && put_varint_field(out, t1, TAGLEN(t1), srid)) return BM_ERR_PY;
        if (wkb && put_len_field(out, t2, TAGLEN(t2), p + w + 4, wkb)) return BM_ERR_PY;
        return BM_OK;
    }
    case K_VECTOR: {
        int w = c->wmeta;
        Py_ssize_t n = size - w;
        if (n % 4) return BM_ERR_DATA;
        static const unsigned char t1[] = {PB_VECTOR_VALUES_TAG};
        Py_ssize_t body = n ? TAGLEN(t1) + bm_varint_size((uint64_t)n) + n : 0;
        if (bm_buf_put(out, T_VECTOR, TAGLEN(T_VECTOR)) || bm_buf_varint(out, (uint64_t)body)) return BM_ERR_PY;
        if (n) {
            if (bm_buf_put(out, t1, TAGLEN(t1)) || bm_buf_varint(out, (uint64_t)n) || bm_buf_reserve(out, n))
                return BM_ERR_PY;
            for (Py_ssize_t i = 0; i < n; i += 4) {
                uint32_t bits = float_bits(p + w + i);
                unsigned char *o = out->data + out->len;
                o[0] = (unsigned char)bits; o[1] = (unsigned char)(bits >> 8);
                o[2] = (unsigned char)(bits >> 16); o[3] = (unsigned char)(bits >> 24);
                out->len += 4;
            }
        }
        return BM_OK;
    }
    default:
        return BM_ERR_DATA;
    }
}

/* Whether an UPDATE changed a non-NULL value, as resolve's _differs compares the decoded Python values:
 * floats by value with the sign of zero (NaN always differs), VECTOR element by element, DECIMAL and
 * temporals by their model value (two byte forms can decode alike), everything else by its bytes. Returns
 * 1/0, or BM_ERR_DATA / BM_ERR_PY. */
int bm_values_differ(const bm_col *c, const unsigned char *a, Py_ssize_t na, const unsigned char *b,
                     Py_ssize_t nb, bm_buf *sa, bm_buf *sb) {
    switch (c->kind) {
    case K_FLOAT: case K_DOUBLE: {
        double x = c->kind == K_FLOAT ? float_value(a) : double_value(a);
        double y = c->kind == K_FLOAT ? float_value(b) : double_value(b);
        return x != y || signbit(x) != signbit(y);
    }
    case K_VECTOR: {
        if (na != nb) return 1;
        for (Py_ssize_t i = c->wmeta; i + 4 <= na; i += 4)
            if (float_value(a + i) != float_value(b + i)) return 1;
        return 0;
    }
    case K_DECIMAL: case K_DATE: case K_DATETIME: case K_TIMESTAMP: case K_TIME: {
        int rc;
        sa->len = 0;
        sb->len = 0;
        if ((rc = bm_put_value(c, a, na, sa)) != BM_OK) return rc;
        if ((rc = bm_put_value(c, b, nb, sb)) != BM_OK) return rc;
        return sa->len != sb->len || (sa->len && memcmp(sa->data, sb->data, (size_t)sa->len) != 0);
    }
    default:
        return na != nb || (na && memcmp(a, b, (size_t)na) != 0);
    }
}
