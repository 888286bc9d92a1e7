/* Serialized BinlogEvents of one table -> the typed Arrow columns of its rows (the resolve job's tables).
 *
 * Why: the typed job (spark/typed_arrow.py) read the row images through protobuf view messages, one Python
 * object per column entry and per value, then converted each output column with Arrow compute per value
 * kind: about 3x the decode's own cost per row. Here one pass over the events' wire bytes reads each row's
 * image (after, or before for DELETE events: the caller groups them), maps every entry to its output
 * column (the caller's resolve(version, name) callback, cached per entry position), and writes the value
 * straight into the column's Arrow buffers, converted as typed_arrow's bulk rules do.
 *
 * Exactness: a value whose kind/type pair has no rule here (FLOAT into DOUBLE, GEOMETRY, VECTOR, raw text,
 * JSON diff, decimal text that needs rounding or a string column, an integer too big to be exact in a
 * float ...) is left null in C and handed back as its Value bytes with its row, so the caller converts it
 * with the per-value reference (typed_values.convert_value) and puts it in place. A value the type cannot
 * hold (a zero date, the zero TIMESTAMP, an integer out of range) is null and listed as a label
 * (row, entry ordinal, column) for binlog_invalid, as are entries whose name the version does not know.
 * Anything a serializer would not write (unknown fields, wrong wire types, invalid UTF-8, a column twice in
 * a row, offsets past 2 GiB) returns None: the caller types the batch the Python way, which decides. Every
 * length is checked against the buffer; nothing is read outside it.
 *
 * Cost: about 2 million column entries per 64 MB slice, so the per-entry path avoids calls and branches
 * that mispredict: tags are compared whole, a name is compared with the last row's at the same position
 * inline, UTF-8 is checked by a table-driven automaton, and the caller's row count sizes the buffers once
 * (fixed-width exactly, var-width from the bytes per row so far). event_header (below) gives the task the
 * fields it routes an event by without making its rows Python objects.
 *
 * Raw row images (the resolve job's tables, compiled_rows.RawImages): a row may also be a BM_RAW_ROWS frame,
 * the bytes of its typed image. It is walked with its context's compiled plan (rows.c's bm_walk_image: the
 * columns build_rows writes, in its order), each value typed straight from its logged bytes where put_fast
 * has a rule whose result is put_value's on the Value bm_put_value writes (by construction, case by case),
 * else through those Value bytes and put_value. Error parity: every value is converted, labelled columns'
 * too, so whatever build_rows refuses is refused here (the job then types the slice from built rows).
 */
#include "typed_columns.h"
#include "arrow_columns.h"
#include "pb_wire.h"
#include "proto_fields.h"
#include "values.h"

/* Target Arrow types: the numbers of binlog_model.spark.typed_arrow._TARGET_CODES. */
enum { T_I32 = 1, T_I64, T_F32, T_F64, T_DEC, T_DATE, T_TS, T_TSZ, T_STR, T_BIN, T_OTHER };

/* Value fields (proto_fields.h, generated from the descriptor). */
enum {
    V_NULL = PB_VALUE_NULL_VALUE, V_INT = PB_VALUE_INT_VALUE, V_LONG = PB_VALUE_LONG_VALUE,
    V_STRING = PB_VALUE_STRING_VALUE, V_BYTES = PB_VALUE_BYTES_VALUE, V_DECIMAL = PB_VALUE_DECIMAL_VALUE,
    V_DOUBLE = PB_VALUE_DOUBLE_VALUE, V_FLOAT = PB_VALUE_FLOAT_VALUE, V_DATETIME = PB_VALUE_DATETIME_VALUE,
    V_DATE = PB_VALUE_DATE_VALUE, V_TIMESTAMP = PB_VALUE_TIMESTAMP_MICROS, V_TIME = PB_VALUE_TIME_MICROS,
    V_UINT64 = PB_VALUE_UINT64_VALUE, V_JSON = PB_VALUE_JSON_VALUE, V_SET = PB_VALUE_SET_VALUE,
    V_BIT = PB_VALUE_BIT_VALUE, V_LAST = PB_VALUE_MAX_FIELD
};
enum { EV_ROW_INDEX = PB_BINLOG_EVENT_ROW_INDEX, EV_ROWS = PB_BINLOG_EVENT_ROWS };
/* temporal_fields reads Date/DateTime fields 1..n into f[number - 1], in year..micros order. */
_Static_assert(PB_DATE_YEAR == 1 && PB_DATE_MONTH == 2 && PB_DATE_DAY == 3 && PB_DATE_MAX_FIELD == 3 &&
               PB_DATE_TIME_YEAR == 1 && PB_DATE_TIME_MONTH == 2 && PB_DATE_TIME_DAY == 3 &&
               PB_DATE_TIME_HOUR == 4 && PB_DATE_TIME_MINUTE == 5 && PB_DATE_TIME_SECOND == 6 &&
               PB_DATE_TIME_MICROS == 7 && PB_DATE_TIME_MAX_FIELD == 7,
               "Date/DateTime are no longer fields 1..n in year..micros order: temporal_fields must follow");
enum { FAST_NO = 1 };       /* put_fast: no shortcut for this value; its Value bytes go through put_value */

#ifdef __SIZEOF_INT128__
typedef __int128 i128;
#define HAVE_I128 1
#else
#define HAVE_I128 0
#endif

typedef struct {
    int code, precision, scale, width;  /* width: bytes per value of a fixed-width column, 0 for var-width */
#if HAVE_I128
    i128 whole, unit, above;            /* DECIMAL: 10^(precision - scale), 10^scale, 10^precision */
#endif
    bm_buf valid, data, offsets;
    Py_ssize_t filled, nulls;
    Py_ssize_t expect, limit;           /* var-width growth: the rows expected, the input's bytes */
    Py_ssize_t stamp;                   /* 1 + the last row written: a column twice in a row is refused */
    PyObject *slow;                     /* [(row, ordinal, value bytes)] | NULL */
} tcol;

typedef struct {                        /* a logged name's output column under one version */
    const unsigned char *name;
    Py_ssize_t len;
    long version;
    int target;
} tname;

typedef struct {
    Py_ssize_t ncols;
    tcol *cols;
    PyObject *resolve;
    PyObject *labels;
    tname *known;                       /* every (version, name) met in this call */
    Py_ssize_t nknown, capknown;
    tname *at;                          /* per entry position: the last (version, name) met there */
    Py_ssize_t capat;
    bm_buf row_event, row_index;
    Py_ssize_t rows;
    /* Raw row images (plan.h's BM_RAW_ROWS): the registered (plan, present columns) pairs, the walker,
     * and the row being walked (its version, the next entry's ordinal). */
    Py_ssize_t ncontexts;
    bm_plan **plans;
    Py_buffer *present;
    bm_walker *walker;
    long walk_version;
    Py_ssize_t walk_ordinal;
    bm_buf value;                       /* a raw entry's Value bytes, when put_fast has no shortcut */
} tbatch;

/* Strict UTF-8 (json_text.c's bm_utf8_valid: no overlongs, surrogates or code points past U+10FFFF) as a
 * table-driven automaton: ASCII is skipped eight bytes at a time up to the first non-ASCII byte; from there each byte costs one table load and one shift, without the
 * branches per character that mostly-ASCII text with a few accented letters mispredicts. Each state is a
 * shift (a multiple of 6): a byte's 64-bit row holds every state's next state at that state's shift. */
enum { U_OK = 0, U_BAD = 6, U_T1 = 12, U_T2 = 18, U_T3 = 24, U_E0 = 30, U_ED = 36, U_F0 = 42, U_F4 = 48 };
static uint64_t utf8_rows[256];

static void utf8_table(void) {
    if (utf8_rows[0x80]) return;                    /* built (0x80 never leads: its row is never 0) */
    for (int c = 0; c < 256; c++) {
        uint64_t next[U_F4 / 6 + 1];
        for (int k = 0; k <= U_F4 / 6; k++) next[k] = U_BAD;
        if (c < 0x80) next[U_OK / 6] = U_OK;
        else if (c >= 0xC2 && c <= 0xDF) next[U_OK / 6] = U_T1;
        else if (c == 0xE0) next[U_OK / 6] = U_E0;
        else if (c == 0xED) next[U_OK / 6] = U_ED;
        else if (c >= 0xE1 && c <= 0xEF) next[U_OK / 6] = U_T2;
        else if (c == 0xF0) next[U_OK / 6] = U_F0;
        else if (c >= 0xF1 && c <= 0xF3) next[U_OK / 6] = U_T3;
        else if (c == 0xF4) next[U_OK / 6] = U_F4;
        if (c >= 0x80 && c <= 0xBF) {
            next[U_T1 / 6] = U_OK;
            next[U_T2 / 6] = U_T1;
            next[U_T3 / 6] = U_T2;
        }
        if (c >= 0xA0 && c <= 0xBF) next[U_E0 / 6] = U_T1;
        if (c >= 0x80 && c <= 0x9F) next[U_ED / 6] = U_T1;
        if (c >= 0x90 && c <= 0xBF) next[U_F0 / 6] = U_T2;
        if (c >= 0x80 && c <= 0x8F) next[U_F4 / 6] = U_T2;
        uint64_t row = 0;
        for (int k = 0; k <= U_F4 / 6; k++) row |= next[k] << (k * 6);
        utf8_rows[c] = row;
    }
}

static inline int utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (w & 0x8080808080808080ULL) break;
    }
    uint64_t state = U_OK;
    for (; i < n; i++) state = utf8_rows[s[i]] >> (state & 63);
    return (state & 63) == U_OK;
}

/* Tags compared whole (number << 3 | wire type), not split into a struct: the hot loops read one entry,
 * value and field after the other. */
#define TAG(number, wire) (((uint64_t)(number) << 3) | (uint64_t)(wire))

static inline int read_tag(const unsigned char **p, const unsigned char *end, uint64_t *tag) {
    if (*p < end && **p < 0x80) {             /* field numbers below 16: one byte */
        *tag = *(*p)++;
        return BM_OK;
    }
    return read_varint(p, end, tag);
}

/* The bytes of a length-delimited field (its tag read already), checked against end. */
static inline int read_len(const unsigned char **p, const unsigned char *end, const unsigned char **data,
                           Py_ssize_t *len) {
    uint64_t n;
    if (*p < end && **p < 0x80) n = *(*p)++;
    else if (read_varint(p, end, &n) != BM_OK) return BM_ERR_DATA;
    if (n > (uint64_t)(end - *p)) return BM_ERR_DATA;
    *data = *p;
    *len = (Py_ssize_t)n;
    *p += n;
    return BM_OK;
}

/* a[0..n) == b[0..n) for the short names of a row image, without a call to memcmp: overlapping 8- or
 * 4-byte loads, never outside either range. */
static inline int same_bytes(const unsigned char *a, const unsigned char *b, Py_ssize_t n) {
    uint64_t x, y, x2, y2;
    uint32_t u, v, u2, v2;
    if (n >= 8) {
        if (n > 16) return !memcmp(a, b, (size_t)n);
        memcpy(&x, a, 8); memcpy(&y, b, 8); memcpy(&x2, a + n - 8, 8); memcpy(&y2, b + n - 8, 8);
        return x == y && x2 == y2;
    }
    if (n >= 4) {
        memcpy(&u, a, 4); memcpy(&v, b, 4); memcpy(&u2, a + n - 4, 4); memcpy(&v2, b + n - 4, 4);
        return u == v && u2 == v2;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (a[i] != b[i]) return 0;
    return 1;
}

/* -- column buffers ---------------------------------------------------------------------------------------- */

static inline int col_bit(tcol *c, int set) {
    if ((c->filled & 7) == 0 && bm_buf_byte(&c->valid, 0) != BM_OK) return BM_ERR_PY;
    if (set) c->valid.data[c->filled >> 3] |= (unsigned char)(1u << (c->filled & 7));
    else c->nulls++;
    c->filled++;
    return BM_OK;
}

static int col_null(tcol *c) {
    if (c->width) {
        if (bm_buf_reserve(&c->data, c->width) != BM_OK) return BM_ERR_PY;
        memset(c->data.data + c->data.len, 0, (size_t)c->width);
        c->data.len += c->width;
    } else {
        int32_t end = (int32_t)c->data.len;
        if (bm_buf_put(&c->offsets, &end, 4) != BM_OK) return BM_ERR_PY;
    }
    return col_bit(c, 0);
}

/* Null up to row r (exclusive): the rows the column had no entry in. */
static inline int col_pad(tcol *c, Py_ssize_t r) {
    while (c->filled < r)
        if (col_null(c) != BM_OK) return BM_ERR_PY;
    return BM_OK;
}

/* A value of `size` bytes into a fixed-width column of that width (a constant at each call: one move). */
static inline int col_fixed(tcol *c, const void *v, Py_ssize_t size) {
    if (size != c->width) return BM_ERR_DATA;           /* never: each rule writes its column's type */
    if (c->data.cap - c->data.len < size && bm_buf_reserve(&c->data, size) != BM_OK) return BM_ERR_PY;
    memcpy(c->data.data + c->data.len, v, (size_t)size);
    c->data.len += size;
    return col_bit(c, 1);
}

static inline int col_i32(tcol *c, int32_t v) { return col_fixed(c, &v, 4); }
static inline int col_i64(tcol *c, int64_t v) { return col_fixed(c, &v, 8); }

/* End the current var-width value (its bytes are in c->data already). */
static inline int col_var_end(tcol *c) {
    if (c->data.len > INT32_MAX) return BM_ERR_DATA;
    int32_t end = (int32_t)c->data.len;
    if (bm_buf_put(&c->offsets, &end, 4) != BM_OK) return BM_ERR_PY;
    return col_bit(c, 1);
}

/* Room for n more bytes of var-width data. When the buffer must grow, it grows to what its values so far
 * predict for the rows expected (+1/8, at most the input's size), so the bytes move once or twice instead
 * of at every doubling. */
static inline int col_room(tcol *c, Py_ssize_t n) {
    if (c->data.cap - c->data.len >= n) return BM_OK;
    Py_ssize_t want = n;
    if (c->filled > 0 && c->expect > c->filled) {
        Py_ssize_t per_row = c->data.len / c->filled + 1;
        Py_ssize_t guess = per_row < c->limit / c->expect ? per_row * c->expect : c->limit;
        guess += guess / 8;
        if (guess - c->data.len > want) want = guess - c->data.len;
    }
    return bm_buf_reserve(&c->data, want);
}

static inline int col_bytes(tcol *c, const unsigned char *s, Py_ssize_t n) {
    if (col_room(c, n) != BM_OK || bm_buf_put(&c->data, s, n) != BM_OK) return BM_ERR_PY;
    return col_var_end(c);
}

#if HAVE_I128
static inline int col_i128(tcol *c, i128 v) { return col_fixed(c, &v, 16); }

static i128 pow10_128(int n) {
    i128 v = 1;
    while (n-- > 0) v *= 10;
    return v;
}
#endif

/* -- outcomes other than a value ---------------------------------------------------------------------------- */

/* A value the type cannot hold: null, and its column's name in binlog_invalid (at its place in the image). */
static int bad(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal) {
    PyObject *label = Py_BuildValue("(nnnO)", b->rows, ordinal, j, Py_None);
    int rc = label && PyList_Append(b->labels, label) == 0 ? BM_OK : BM_ERR_PY;
    Py_XDECREF(label);
    return rc == BM_OK ? col_null(c) : rc;
}

/* No rule here: null for now; the caller converts the Value bytes with the reference and puts it in place. */
static int slow(tbatch *b, tcol *c, Py_ssize_t ordinal, const unsigned char *p, Py_ssize_t n) {
    if (!c->slow && !(c->slow = PyList_New(0))) return BM_ERR_PY;
    PyObject *item = Py_BuildValue("(nny#)", b->rows, ordinal, (const char *)p, n);
    int rc = item && PyList_Append(c->slow, item) == 0 ? BM_OK : BM_ERR_PY;
    Py_XDECREF(item);
    return rc == BM_OK ? col_null(c) : rc;
}

/* -- values ----------------------------------------------------------------------------------------------- */

static int days_in_month(uint64_t y, uint64_t m) {
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return days[m - 1] + (m == 2 && leap);
}

/* Days since 1970-01-01 of a date Python's datetime.date accepts (year 1..9999); 0 when not such a date. */
static int civil_days(uint64_t y, uint64_t m, uint64_t d, int64_t *out) {
    if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > (uint64_t)days_in_month(y, m)) return 0;
    int64_t yy = (int64_t)y - (m <= 2);
    int64_t era = yy / 400, yoe = yy - era * 400;
    int64_t mp = m > 2 ? (int64_t)m - 3 : (int64_t)m + 9;
    int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    *out = era * 146097 + doe - 719468;
    return 1;
}

/* The varint fields 1..nmax of a Date/DateTime message (each at most once, below 2^32); BM_ERR_DATA else. */
static int temporal_fields(const unsigned char *p, const unsigned char *end, uint64_t *f, int nmax) {
    int seen = 0;
    for (int k = 0; k < nmax; k++) f[k] = 0;
    while (p < end) {
        pb_field x;
        if (read_field(&p, end, &x) != BM_OK || x.wire != WT_VARINT || x.number < 1 || (int)x.number > nmax ||
            (seen & (1 << x.number)) || x.num > UINT32_MAX)
            return BM_ERR_DATA;
        seen |= 1 << x.number;
        f[x.number - 1] = x.num;
    }
    return BM_OK;
}

/* A Date (year, month, day) or DateTime (and hour, minute, second, micros) into a DATE or TIMESTAMP column;
 * null and labelled when Python's datetime would refuse it. */
static int put_temporal(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal, const uint64_t *f, int date) {
    if (!(c->code == T_TS || (date && c->code == T_DATE))) return FAST_NO;
    int64_t days;
    if (!civil_days(f[0], f[1], f[2], &days)) return bad(b, c, j, ordinal);
    if (c->code == T_DATE) return col_i32(c, (int32_t)days);
    if (!date && (f[3] >= 24 || f[4] >= 60 || f[5] >= 60 || f[6] >= 1000000)) return bad(b, c, j, ordinal);
    int64_t seconds = days * 86400 + (date ? 0 : (int64_t)(f[3] * 3600 + f[4] * 60 + f[5]));
    return col_i64(c, seconds * 1000000 + (date ? 0 : (int64_t)f[6]));
}

/* An integer value (signed sv, or unsigned uv when is_unsigned) into column c. */
static int put_integer(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal, int64_t sv, uint64_t uv,
                       int is_unsigned, const unsigned char *raw, Py_ssize_t rawn) {
    switch (c->code) {
    case T_I32:
        if (is_unsigned ? uv > INT32_MAX : (sv > INT32_MAX || sv < INT32_MIN)) return bad(b, c, j, ordinal);
        return col_i32(c, is_unsigned ? (int32_t)uv : (int32_t)sv);
    case T_I64:
        if (is_unsigned && uv > INT64_MAX) return bad(b, c, j, ordinal);
        return col_i64(c, is_unsigned ? (int64_t)uv : sv);
#if HAVE_I128
    case T_DEC: {
        i128 v = is_unsigned ? (i128)uv : (i128)sv;
        if (v >= c->whole || v <= -c->whole) return bad(b, c, j, ordinal);
        return col_i128(c, v * c->unit);
    }
#endif
    case T_F32: case T_F64: {
        uint64_t exact = (uint64_t)1 << (c->code == T_F32 ? 24 : 53);
        if (is_unsigned ? uv > exact : (sv > (int64_t)exact || sv < -(int64_t)exact))
            return slow(b, c, ordinal, raw, rawn);         /* may not be exact: the reference decides */
        double d = is_unsigned ? (double)uv : (double)sv;
        if (c->code == T_F32) {
            float f = (float)d;
            return col_fixed(c, &f, 4);
        }
        return col_fixed(c, &d, 8);
    }
    case T_STR:
        if (col_room(c, 21) != BM_OK ||
            (is_unsigned ? bm_buf_u64(&c->data, uv) : bm_buf_i64(&c->data, sv)) != BM_OK)
            return BM_ERR_PY;
        return col_var_end(c);
    default:
        return slow(b, c, ordinal, raw, rawn);
    }
}

/* No rule here: the Value's bytes go to the reference (slow), or, from put_fast (raw NULL: no Value bytes
 * yet), FAST_NO: the caller writes them and comes back through put_value. */
static int hand_back(tbatch *b, tcol *c, Py_ssize_t ordinal, const unsigned char *raw, Py_ssize_t rawn) {
    return raw ? slow(b, c, ordinal, raw, rawn) : FAST_NO;
}

/* Plain decimal text ("-12.340") into a decimal column, when exact at its scale and within its precision;
 * else (or for any other spelling) the reference decides. */
static int put_decimal_text(tbatch *b, tcol *c, Py_ssize_t ordinal, const unsigned char *s, Py_ssize_t n,
                            const unsigned char *raw, Py_ssize_t rawn) {
#if HAVE_I128
    if (c->code != T_DEC) return hand_back(b, c, ordinal, raw, rawn);
    Py_ssize_t i = 0;
    int negative = 0, digits = 0, frac = -1, seen_digit = 0;
    uint64_t small = 0;                                /* the first 18 digits: no 128-bit arithmetic */
    i128 v = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
    for (; i < n; i++) {
        if (s[i] == '.' && frac < 0) { frac = 0; continue; }
        if (s[i] < '0' || s[i] > '9') return hand_back(b, c, ordinal, raw, rawn);
        seen_digit = 1;
        if (frac >= 0) {
            if (frac >= c->scale) {                    /* past the scale: only zeros keep it exact */
                if (s[i] != '0') return hand_back(b, c, ordinal, raw, rawn);
                continue;
            }
            frac++;
        }
        if (digits == 0 && s[i] == '0') continue;      /* leading zeros */
        if (++digits > 38) return hand_back(b, c, ordinal, raw, rawn);
        if (digits <= 18) small = small * 10 + (uint64_t)(s[i] - '0');
        else v = (digits == 19 ? (i128)small : v) * 10 + (s[i] - '0');
    }
    if (!seen_digit) return hand_back(b, c, ordinal, raw, rawn);
    if (digits <= 18) v = (i128)small;
    for (int k = frac < 0 ? 0 : frac; k < c->scale; k++) {
        if (v != 0 && ++digits > 38) return hand_back(b, c, ordinal, raw, rawn);
        v *= 10;
    }
    if (v >= c->above) return hand_back(b, c, ordinal, raw, rawn);
    return col_i128(c, negative ? -v : v);
#else
    return hand_back(b, c, ordinal, raw, rawn);
#endif
}

/* SET labels joined with ','. */
static int put_set(tcol *c, const unsigned char *p, const unsigned char *end) {
    int first = 1;
    while (p < end) {
        pb_field x;
        if (read_field(&p, end, &x) != BM_OK || x.number != PB_SET_VALUE_LABELS || x.wire != WT_LEN ||
            !utf8_valid(x.data, x.len))
            return BM_ERR_DATA;
        if (col_room(c, x.len + 1) != BM_OK || (!first && bm_buf_byte(&c->data, ',') != BM_OK) ||
            bm_buf_put(&c->data, x.data, x.len) != BM_OK)
            return BM_ERR_PY;
        first = 0;
    }
    return col_var_end(c);
}

/* One Value's bytes into column c (row b->rows, entry ordinal). */
static int put_value(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal, const unsigned char *p,
                     Py_ssize_t n) {
    const unsigned char *q = p, *end = p + n;
    pb_field x;             /* its one field, read into locals first (number and wire type checked whole) */
    uint64_t tag;
    if (n == 0) return slow(b, c, ordinal, p, n);           /* an empty Value: the reference says what */
    if (read_tag(&q, end, &tag) != BM_OK || tag >> 3 == 0 || tag >> 3 > V_LAST) return BM_ERR_DATA;
    x.number = (uint32_t)(tag >> 3);
    x.wire = (int)(tag & 7);
    x.num = 0;
    x.data = NULL;
    x.len = 0;
    switch (x.wire) {
    case WT_VARINT:
        if (read_varint(&q, end, &x.num) != BM_OK) return BM_ERR_DATA;
        break;
    case WT_LEN:
        if (read_len(&q, end, &x.data, &x.len) != BM_OK) return BM_ERR_DATA;
        break;
    case WT_I64: case WT_I32:
        x.len = x.wire == WT_I64 ? 8 : 4;
        if (end - q < x.len) return BM_ERR_DATA;
        x.data = q;
        q += x.len;
        break;
    default:
        return BM_ERR_DATA;
    }
    if (q != end) return BM_ERR_DATA;
    int varint = x.wire == WT_VARINT, len = x.wire == WT_LEN;
    switch (x.number) {
    case V_NULL:
        if (!varint) return BM_ERR_DATA;
        return col_null(c);
    case V_INT:
        if (!varint) return BM_ERR_DATA;
        return put_integer(b, c, j, ordinal, (int32_t)(uint32_t)x.num, 0, 0, p, n);
    case V_LONG: case V_TIME:
        if (!varint) return BM_ERR_DATA;
        return put_integer(b, c, j, ordinal, (int64_t)x.num, 0, 0, p, n);
    case V_UINT64: case V_BIT:
        if (!varint) return BM_ERR_DATA;
        return put_integer(b, c, j, ordinal, 0, x.num, 1, p, n);
    case V_TIMESTAMP:
        if (!varint) return BM_ERR_DATA;
        if (c->code != T_TSZ) return slow(b, c, ordinal, p, n);
        if (x.num == 0) return bad(b, c, j, ordinal);          /* the zero TIMESTAMP has no instant */
        return col_i64(c, (int64_t)x.num);
    case V_STRING: case V_JSON:
        if (!len || !utf8_valid(x.data, x.len)) return BM_ERR_DATA;
        if (c->code == T_STR || c->code == T_BIN) return col_bytes(c, x.data, x.len);
        return slow(b, c, ordinal, p, n);
    case V_BYTES:
        if (!len) return BM_ERR_DATA;
        if (c->code == T_BIN) return col_bytes(c, x.data, x.len);
        return slow(b, c, ordinal, p, n);
    case V_DECIMAL:
        if (!len || !utf8_valid(x.data, x.len)) return BM_ERR_DATA;
        return put_decimal_text(b, c, ordinal, x.data, x.len, p, n);
    case V_DOUBLE:
        if (x.wire != WT_I64) return BM_ERR_DATA;
        if (c->code != T_F64) return slow(b, c, ordinal, p, n);
        return col_fixed(c, x.data, 8);
    case V_FLOAT:
        if (x.wire != WT_I32) return BM_ERR_DATA;
        if (c->code != T_F32) return slow(b, c, ordinal, p, n);   /* into DOUBLE: the shortest text's value */
        return col_fixed(c, x.data, 4);
    case V_DATE: case V_DATETIME: {
        uint64_t f[7];
        int date = x.number == V_DATE;
        if (!len || temporal_fields(x.data, x.data + x.len, f, date ? PB_DATE_MAX_FIELD : PB_DATE_TIME_MAX_FIELD)
                != BM_OK)
            return BM_ERR_DATA;
        if (!(c->code == T_TS || (date && c->code == T_DATE))) return slow(b, c, ordinal, p, n);
        return put_temporal(b, c, j, ordinal, f, date);
    }
    case V_SET:
        if (!len) return BM_ERR_DATA;
        if (c->code != T_STR) return slow(b, c, ordinal, p, n);
        return put_set(c, x.data, x.data + x.len);
    default:                                               /* GEOMETRY, VECTOR, raw text, JSON diff */
        if (!len) return BM_ERR_DATA;
        return slow(b, c, ordinal, p, n);
    }
}

/* -- rows ------------------------------------------------------------------------------------------------- */

/* The output column of a logged name under a version (-1: none): cached per entry position, then per call,
 * then asked of the caller. */
static int target_of_slow(tbatch *b, Py_ssize_t ordinal, long version, const unsigned char *name,
                          Py_ssize_t len, int *target) {
    if (ordinal >= b->capat) {
        Py_ssize_t cap = b->capat ? b->capat * 2 : 64;
        while (cap <= ordinal) cap *= 2;
        tname *at = PyMem_Realloc(b->at, (size_t)cap * sizeof *at);
        if (!at) { PyErr_NoMemory(); return BM_ERR_PY; }
        for (Py_ssize_t k = b->capat; k < cap; k++) at[k].name = NULL;
        b->at = at;
        b->capat = cap;
    }
    tname *hit = &b->at[ordinal];
    for (Py_ssize_t k = 0; k < b->nknown; k++) {
        tname *t = &b->known[k];
        if (t->version == version && t->len == len && !memcmp(t->name, name, (size_t)len)) {
            *hit = *t;
            *target = t->target;
            return BM_OK;
        }
    }
    if (!utf8_valid(name, len)) return BM_ERR_DATA;      /* checked once per new name */
    PyObject *found = PyObject_CallFunction(b->resolve, "ly#", version, (const char *)name, len);
    if (!found) return BM_ERR_PY;
    long j = PyLong_AsLong(found);
    Py_DECREF(found);
    if (j == -1 && PyErr_Occurred()) return BM_ERR_PY;
    if (j < -1 || j >= b->ncols) {
        PyErr_SetString(PyExc_ValueError, "typed_columns: resolve returned no column of the table");
        return BM_ERR_PY;
    }
    if (b->nknown == b->capknown) {
        Py_ssize_t cap = b->capknown ? b->capknown * 2 : 64;
        tname *known = PyMem_Realloc(b->known, (size_t)cap * sizeof *known);
        if (!known) { PyErr_NoMemory(); return BM_ERR_PY; }
        b->known = known;
        b->capknown = cap;
    }
    tname t = {name, len, version, (int)j};
    b->known[b->nknown++] = t;
    *hit = t;
    *target = (int)j;
    return BM_OK;
}

/* target_of_slow's first cache, inline: the same name as the last row's at this position (the usual case). */
static inline int target_of(tbatch *b, Py_ssize_t ordinal, long version, const unsigned char *name,
                            Py_ssize_t len, int *target) {
    if (ordinal < b->capat) {
        tname *hit = &b->at[ordinal];
        if (hit->name && hit->version == version && hit->len == len &&
            (hit->name == name || same_bytes(hit->name, name, len))) {     /* (a raw row: the plan's name) */
            *target = hit->target;
            return BM_OK;
        }
    }
    return target_of_slow(b, ordinal, version, name, len, target);
}

/* A row's last two columns: its row_index and the event it came from. */
static int end_row(tbatch *b, uint64_t row_index, int32_t event) {
    if (row_index > INT64_MAX) return BM_ERR_DATA;
    int64_t ri = (int64_t)row_index;
    if (bm_buf_put(&b->row_index, &ri, 8) != BM_OK || bm_buf_put(&b->row_event, &event, 4) != BM_OK)
        return BM_ERR_PY;
    b->rows++;
    return BM_OK;
}

/* The column of a row's entry (its ordinal in the image, its logged name): *out, or NULL when the version
 * has no such name (then labelled for binlog_invalid). */
static int entry_column(tbatch *b, Py_ssize_t ordinal, long version, const unsigned char *name,
                        Py_ssize_t name_len, tcol **out, int *target) {
    int j, rc;
    *out = NULL;
    if ((rc = target_of(b, ordinal, version, name, name_len, &j)) != BM_OK) return rc;
    if (j < 0) {
        PyObject *label = Py_BuildValue("(nniy#)", b->rows, ordinal, -1, (const char *)name, name_len);
        rc = label && PyList_Append(b->labels, label) == 0 ? BM_OK : BM_ERR_PY;
        Py_XDECREF(label);
        return rc;
    }
    tcol *c = &b->cols[j];
    if (c->stamp == b->rows + 1) return BM_ERR_DATA;     /* a column twice in one row */
    c->stamp = b->rows + 1;
    if ((rc = col_pad(c, b->rows)) != BM_OK) return rc;
    *out = c;
    *target = j;
    return BM_OK;
}

/* One column entry of a row (its ordinal, logged name and Value bytes) into its column. */
static int add_entry(tbatch *b, Py_ssize_t ordinal, long version, const unsigned char *name, Py_ssize_t name_len,
                     const unsigned char *value, Py_ssize_t value_len) {
    tcol *c;
    int j;
    int rc = entry_column(b, ordinal, version, name, name_len, &c, &j);
    if (rc != BM_OK || !c) return rc;
    return put_value(b, c, j, ordinal, value, value_len);
}

/* One Row message: its image's entries into the columns, its row_index. */
static int add_row(tbatch *b, const unsigned char *p, const unsigned char *end, int image, long version,
                   int32_t event) {
    uint64_t row_index = 0;
    Py_ssize_t ordinal = 0;
    int rc;
    while (p < end) {
        uint64_t tag;
        const unsigned char *entry;
        Py_ssize_t entry_len;
        if (read_tag(&p, end, &tag) != BM_OK) return BM_ERR_DATA;
        if (tag == TAG(1, WT_VARINT)) {
            if (read_varint(&p, end, &row_index) != BM_OK) return BM_ERR_DATA;
            continue;
        }
        if (tag != TAG(2, WT_LEN) && tag != TAG(3, WT_LEN) && tag != TAG(4, WT_LEN)) return BM_ERR_DATA;
        if (read_len(&p, end, &entry, &entry_len) != BM_OK) return BM_ERR_DATA;
        if (tag != TAG(image, WT_LEN)) continue;
        /* Column { name = 1; value = 2; invisible = 3 } */
        const unsigned char *q = entry, *qend = entry + entry_len, *name = NULL, *value = NULL;
        Py_ssize_t name_len = 0, value_len = 0;
        while (q < qend) {
            if (read_tag(&q, qend, &tag) != BM_OK) return BM_ERR_DATA;
            if (tag == TAG(1, WT_LEN) && !name) {
                if (read_len(&q, qend, &name, &name_len) != BM_OK) return BM_ERR_DATA;
            } else if (tag == TAG(2, WT_LEN) && !value) {
                if (read_len(&q, qend, &value, &value_len) != BM_OK) return BM_ERR_DATA;
            } else if (tag == TAG(3, WT_VARINT)) {
                uint64_t invisible;
                if (read_varint(&q, qend, &invisible) != BM_OK) return BM_ERR_DATA;
            } else {
                return BM_ERR_DATA;
            }
        }
        if (!name) name = (const unsigned char *)"";
        if ((rc = add_entry(b, ordinal, version, name, name_len, value ? value : (const unsigned char *)"",
                            value_len)) != BM_OK)
            return rc;
        ordinal++;
    }
    return end_row(b, row_index, event);
}

/* -- raw row images ---------------------------------------------------------------------------------------- */

/* An integer value as put_value types the Value bm_put_value writes for it (V_INT, V_LONG, V_UINT64, V_BIT,
 * V_TIME), into the targets where put_integer never hands a value back. */
static int fast_integer(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal, int64_t sv, uint64_t uv,
                        int is_unsigned) {
    if (c->code != T_I32 && c->code != T_I64 && c->code != T_STR && !(HAVE_I128 && c->code == T_DEC))
        return FAST_NO;
    return put_integer(b, c, j, ordinal, sv, uv, is_unsigned, NULL, 0);
}

/* The typed value of a raw entry without its Value bytes, where the result is put_value's on them by
 * construction (each case follows bm_put_value's bytes into put_value's rule for the target); FAST_NO for
 * every other kind, target or value (a value bm_put_value refuses, text that is not UTF-8 ...). */
static int put_fast(tbatch *b, tcol *c, Py_ssize_t j, Py_ssize_t ordinal, const bm_entry *e) {
    const bm_col *col = e->col;
    const unsigned char *p = e->raw;
    if (e->null) return col_null(c);
    int text_target = c->code == T_STR || c->code == T_BIN;
    if (col->wire == W_JSON) {                       /* MySQL's binary JSON, whatever the kind: its text */
        if (!text_target || !utf8_valid(e->json, e->json_len)) return FAST_NO;
        return col_bytes(c, e->json, e->json_len);
    }
    switch (col->kind) {
    case K_INT: case K_LONG: case K_UINT64: {
        __int128 v;
        if (bm_read_int(col, p, &v) != BM_OK) return FAST_NO;
        if (col->kind == K_INT)
            return v < INT32_MIN || v > INT32_MAX ? FAST_NO : fast_integer(b, c, j, ordinal, (int32_t)v, 0, 0);
        if (col->kind == K_LONG)
            return v < INT64_MIN || v > INT64_MAX ? FAST_NO : fast_integer(b, c, j, ordinal, (int64_t)v, 0, 0);
        return v < 0 || v > (__int128)UINT64_MAX ? FAST_NO : fast_integer(b, c, j, ordinal, 0, (uint64_t)v, 1);
    }
    case K_BIT: {
        int n = col->wmeta;
        for (int i = 0; i < n - 8; i++)
            if (p[i]) return FAST_NO;
        uint64_t v = 0;
        for (int i = n > 8 ? n - 8 : 0; i < n; i++) v = (v << 8) | p[i];
        return fast_integer(b, c, j, ordinal, 0, v, 1);
    }
    case K_TIME:
        return fast_integer(b, c, j, ordinal, bm_time_micros(col, p), 0, 0);
    case K_TEXT: case K_JSON: {
        const unsigned char *s = p + col->wmeta;
        Py_ssize_t n = e->size - col->wmeta;
        if (col->wire != W_VARLEN || (col->kind == K_TEXT && col->charset != CS_UTF8)) return FAST_NO;
        if (!text_target || !utf8_valid(s, n)) return FAST_NO;
        return col_bytes(c, s, n);
    }
    case K_BYTES: {
        if (c->code != T_BIN) return FAST_NO;
        Py_ssize_t n = e->size - col->wmeta, total = n < col->pad_to ? col->pad_to : n;
        if (col_room(c, total) != BM_OK || bm_buf_put(&c->data, p + col->wmeta, n) != BM_OK) return BM_ERR_PY;
        if (total > n) {                                 /* BINARY(n): zeros to its length */
            memset(c->data.data + c->data.len, 0, (size_t)(total - n));
            c->data.len += total - n;
        }
        return col_var_end(c);
    }
    case K_ENUM: {
        uint64_t idx = 0;
        for (int i = col->wmeta - 1; i >= 0; i--) idx = (idx << 8) | p[i];
        if (!text_target || idx >= (uint64_t)col->nlabels) return FAST_NO;
        return col_bytes(c, (const unsigned char *)col->labels[idx].ptr, col->labels[idx].len);
    }
    case K_SET: {
        uint64_t mask = 0;
        for (int i = col->wmeta - 1; i >= 0; i--) mask = (mask << 8) | p[i];
        if (c->code != T_STR || (col->nlabels < 64 && (mask >> col->nlabels))) return FAST_NO;
        int first = 1;
        for (Py_ssize_t i = 0; i < col->nlabels && i < 64; i++) {
            if (!(mask >> i & 1)) continue;
            const bm_str *label = &col->labels[i];
            if (col_room(c, label->len + 1) != BM_OK || (!first && bm_buf_byte(&c->data, ',') != BM_OK) ||
                bm_buf_put(&c->data, label->ptr, label->len) != BM_OK)
                return BM_ERR_PY;
            first = 0;
        }
        return col_var_end(c);
    }
    case K_DECIMAL: {           /* bm_put_value's text, then put_value's rule for it */
        char text[BM_DECIMAL_TEXT];
        Py_ssize_t n;
        if (c->code != T_DEC || bm_decimal_text(col, p, text, &n) != BM_OK) return FAST_NO;
        return put_decimal_text(b, c, ordinal, (const unsigned char *)text, n, NULL, 0);
    }
    case K_DOUBLE:
        return c->code == T_F64 ? col_fixed(c, p, 8) : FAST_NO;
    case K_TIMESTAMP: {
        if (c->code != T_TSZ) return FAST_NO;
        int64_t micros = bm_timestamp_micros(col, p);
        return micros == 0 ? bad(b, c, j, ordinal) : col_i64(c, micros);   /* the zero TIMESTAMP: no instant */
    }
    case K_DATE: case K_DATETIME: {
        uint64_t f[7] = {0, 0, 0, 0, 0, 0, 0};
        int date = col->kind == K_DATE;
        if (date) {
            uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
            f[0] = v >> 9; f[1] = (v >> 5) & 15; f[2] = v & 31;
        } else if (bm_datetime_fields(col, p, f) != BM_OK) {
            return FAST_NO;
        }
        return put_temporal(b, c, j, ordinal, f, date);
    }
    default:
        return FAST_NO;
    }
}

/* bm_walk_image's callback: one column of a raw image, named by the plan. */
static int raw_entry(void *arg, const bm_entry *e) {
    tbatch *b = arg;
    Py_ssize_t ordinal = b->walk_ordinal++;
    tcol *c;
    int j;
    int rc = entry_column(b, ordinal, b->walk_version, (const unsigned char *)e->col->name.ptr, e->col->name.len,
                          &c, &j);
    if (rc != BM_OK) return rc;
    if (c && (rc = put_fast(b, c, j, ordinal, e)) != FAST_NO) return rc;
    /* A column no version knows is only labelled, but its value is still converted: build_rows converts
     * every value it writes, and a value it refuses must send the slice the reference way here too. */
    b->value.len = 0;
    if ((rc = bm_entry_value(e, &b->value)) != BM_OK || !c) return rc;
    return put_value(b, c, j, ordinal, b->value.data, b->value.len);
}

/* One raw row (a BM_RAW_ROWS frame: context, row_index, the typed image's bytes): the columns build_rows
 * would have written into the Row, with the same Value bytes, typed as add_row types them. */
static int add_raw_row(tbatch *b, const unsigned char *p, const unsigned char *end, long version, int32_t event) {
    uint64_t context, row_index;
    if (read_varint(&p, end, &context) != BM_OK || read_varint(&p, end, &row_index) != BM_OK ||
        context >= (uint64_t)b->ncontexts)
        return BM_ERR_DATA;
    if (!b->walker && !(b->walker = bm_walker_new())) return BM_ERR_PY;
    b->walk_version = version;
    b->walk_ordinal = 0;
    Py_buffer *present = &b->present[context];
    int rc = bm_walk_image(b->walker, b->plans[context], p, end - p, present->buf, present->len, raw_entry, b);
    if (rc != BM_OK) return rc;
    return end_row(b, row_index, event);
}

/* One event: its rows (one row of nulls for an event without rows, with the event's row_index). */
static int add_event(tbatch *b, const unsigned char *p, Py_ssize_t n, int image, long version, int32_t event) {
    const unsigned char *end = p + n;
    uint64_t row_index = 0;
    int rows = 0, rc;
    while (p < end) {
        pb_field x;
        if (read_field(&p, end, &x) != BM_OK) return BM_ERR_DATA;
        if (x.number == EV_ROWS) {
            if (x.wire != WT_LEN) return BM_ERR_DATA;
            if ((rc = add_row(b, x.data, x.data + x.len, image, version, event)) != BM_OK) return rc;
            rows++;
        } else if (x.number == BM_RAW_ROWS) {
            if (x.wire != WT_LEN) return BM_ERR_DATA;
            if ((rc = add_raw_row(b, x.data, x.data + x.len, version, event)) != BM_OK) return rc;
            rows++;
        } else if (x.number == EV_ROW_INDEX) {
            if (x.wire != WT_VARINT) return BM_ERR_DATA;
            row_index = x.num;
        }
    }
    if (rows) return BM_OK;
    return end_row(b, row_index, event);
}

/* -- event headers --------------------------------------------------------------------------------------- */

enum { EV_TIMESTAMP = PB_BINLOG_EVENT_UTC_TIMESTAMP, EV_DB = PB_BINLOG_EVENT_DB, EV_TABLE = PB_BINLOG_EVENT_TABLE,
       EV_OPERATION = PB_BINLOG_EVENT_OPERATION, EV_POSITION = PB_BINLOG_EVENT_POSITION,
       EV_GTID = PB_BINLOG_EVENT_GTID, EV_EVENT_INDEX = PB_BINLOG_EVENT_EVENT_INDEX };

/* A string field's text; NULL with BM_ERR_DATA for bytes that are not UTF-8 (protobuf's parser refuses them). */
static int header_text(const unsigned char *s, Py_ssize_t n, PyObject **out) {
    if (!utf8_valid(s, n)) return BM_ERR_DATA;
    PyObject *text = PyUnicode_DecodeUTF8((const char *)s, n, NULL);
    if (!text) return BM_ERR_PY;
    Py_XSETREF(*out, text);
    return BM_OK;
}

/* event_header(payload) -> (db, table, operation, rows, file, offset, inner_index | -1, gtid, seconds, nanos,
 * event_index, row_index) | None: the event-level fields of a serialized BinlogEvent as protobuf's parser
 * reads them (integers truncated to their field's width, the last of a repeated scalar), and the count of its
 * rows, without the rows. None for anything this reader does not follow the parser on (a field it reads of
 * the wrong wire type, a message field twice, schema changes, raw statement text, text that is not UTF-8,
 * truncated bytes): the caller parses the event with protobuf, which decides (and raises where the bytes
 * are bad). */
PyObject *bm_py_event_header(PyObject *self, PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "event_header(payload: bytes)");
        return NULL;
    }
    utf8_table();
    const unsigned char *p = (const unsigned char *)PyBytes_AS_STRING(arg), *end = p + PyBytes_GET_SIZE(arg);
    PyObject *db = NULL, *table = NULL, *file = NULL, *gtid = NULL, *result = NULL;
    int32_t operation = 0, nanos = 0;
    uint32_t event_index = 0;
    int64_t seconds = 0, inner = -1;
    uint64_t offset = 0, row_index = 0;
    Py_ssize_t rows = 0;
    int seen_timestamp = 0, seen_position = 0, rc = BM_OK;
    while (rc == BM_OK && p < end) {
        pb_field x;
        if (read_field(&p, end, &x) != BM_OK) { rc = BM_ERR_DATA; break; }
        int len = x.wire == WT_LEN, varint = x.wire == WT_VARINT;
        switch (x.number) {
        case EV_ROWS: case BM_RAW_ROWS:
            if (!len) rc = BM_ERR_DATA;
            rows++;
            break;
        case EV_DB: case EV_TABLE: case EV_GTID:
            if (!len) { rc = BM_ERR_DATA; break; }
            rc = header_text(x.data, x.len, x.number == EV_DB ? &db : x.number == EV_TABLE ? &table : &gtid);
            break;
        case EV_OPERATION:
            if (!varint) { rc = BM_ERR_DATA; break; }
            operation = (int32_t)(uint32_t)x.num;
            break;
        case EV_EVENT_INDEX:
            if (!varint) { rc = BM_ERR_DATA; break; }
            event_index = (uint32_t)x.num;
            break;
        case EV_ROW_INDEX:
            if (!varint) { rc = BM_ERR_DATA; break; }
            row_index = x.num;
            break;
        case EV_TIMESTAMP: case EV_POSITION: {      /* Timestamp {seconds, nanos}; BinlogPosition */
            int *seen = x.number == EV_TIMESTAMP ? &seen_timestamp : &seen_position;
            if (!len || *seen) { rc = BM_ERR_DATA; break; }
            *seen = 1;
            const unsigned char *q = x.data, *qend = x.data + x.len;
            while (rc == BM_OK && q < qend) {
                pb_field y;
                if (read_field(&q, qend, &y) != BM_OK) { rc = BM_ERR_DATA; break; }
                if (x.number == EV_TIMESTAMP) {
                    if ((y.number == PB_TIMESTAMP_SECONDS || y.number == PB_TIMESTAMP_NANOS) && y.wire != WT_VARINT)
                        rc = BM_ERR_DATA;
                    else if (y.number == PB_TIMESTAMP_SECONDS) seconds = (int64_t)y.num;
                    else if (y.number == PB_TIMESTAMP_NANOS) nanos = (int32_t)(uint32_t)y.num;
                } else if (y.number == PB_BINLOG_POSITION_FILE) {
                    rc = y.wire == WT_LEN ? header_text(y.data, y.len, &file) : BM_ERR_DATA;
                } else if (y.number == PB_BINLOG_POSITION_OFFSET || y.number == PB_BINLOG_POSITION_NEXT_OFFSET ||
                           y.number == PB_BINLOG_POSITION_INNER_INDEX) {
                    if (y.wire != WT_VARINT) rc = BM_ERR_DATA;
                    else if (y.number == PB_BINLOG_POSITION_OFFSET) offset = y.num;
                    else if (y.number == PB_BINLOG_POSITION_INNER_INDEX) inner = (uint32_t)y.num;
                }
            }
            break;
        }
        case PB_BINLOG_EVENT_SOURCE: case PB_BINLOG_EVENT_SERVER_UUID: case PB_BINLOG_EVENT_TRACE_INFO:
        case PB_BINLOG_EVENT_STATEMENT:             /* other text: the parser checks it is UTF-8 */
            if (len && !utf8_valid(x.data, x.len)) rc = BM_ERR_DATA;     /* the parser refuses the event */
            break;
        case PB_BINLOG_EVENT_SCHEMA_CHANGES: case PB_BINLOG_EVENT_STATEMENT_RAW:    /* messages: the parser's */
            if (len) rc = BM_ERR_DATA;
            break;
        default:                   /* other fields, and a field of the wrong wire type: the parser skips them too */
            break;
        }
    }
    if (rc == BM_OK) {
        PyObject *empty = NULL;
        if ((!db || !table || !file || !gtid) && !(empty = PyUnicode_FromStringAndSize("", 0))) rc = BM_ERR_PY;
        else
            result = Py_BuildValue("(OOinOKLOLiIK)", db ? db : empty, table ? table : empty, (int)operation, rows,
                                   file ? file : empty, (unsigned long long)offset, (long long)inner,
                                   gtid ? gtid : empty, (long long)seconds, (int)nanos, (unsigned int)event_index,
                                   (unsigned long long)row_index);
        Py_XDECREF(empty);
    } else if (rc == BM_ERR_DATA && !PyErr_Occurred()) {
        result = Py_None;
        Py_INCREF(result);
    }
    Py_XDECREF(db);
    Py_XDECREF(table);
    Py_XDECREF(file);
    Py_XDECREF(gtid);
    return result;
}

/* -- the entry point -------------------------------------------------------------------------------------- */

static PyObject *column_result(tcol *c) {
    PyObject *valid = NULL;
    if (c->nulls) valid = bm_blob_from_buf(&c->valid);
    else { valid = Py_None; Py_INCREF(valid); }
    PyObject *offsets = NULL;
    if (c->width) { offsets = Py_None; Py_INCREF(offsets); }
    else offsets = bm_blob_from_buf(&c->offsets);
    PyObject *slow_list = c->slow ? c->slow : Py_None;
    Py_INCREF(slow_list);
    return Py_BuildValue("(NNNN)", valid, bm_blob_from_buf(&c->data), offsets, slow_list);
}

PyObject *bm_py_typed_columns(PyObject *self, PyObject *args) {
    PyObject *payloads, *versions, *targets, *resolve, *contexts = NULL;
    int image;
    Py_ssize_t expected = 0;
    if (!PyArg_ParseTuple(args, "O!iO!O!O|nO!:typed_columns", &PyList_Type, &payloads, &image, &PyList_Type,
                          &versions, &PyList_Type, &targets, &resolve, &expected, &PyList_Type, &contexts))
        return NULL;
    if (!PyCallable_Check(resolve) || (image != 3 && image != 4) ||
        PyList_GET_SIZE(versions) != PyList_GET_SIZE(payloads)) {
        PyErr_SetString(PyExc_TypeError, "typed_columns(payloads, image 3|4, versions, targets, resolve)");
        return NULL;
    }
    utf8_table();
    /* Copies first: the callback cannot change what is read. */
    PyObject *items = PySequence_Tuple(payloads), *vers = PySequence_Tuple(versions);
    PyObject *ctxs = contexts ? PySequence_Tuple(contexts) : PyTuple_New(0);
    if (!items || !vers || !ctxs) { Py_XDECREF(items); Py_XDECREF(vers); Py_XDECREF(ctxs); return NULL; }
    tbatch b;
    memset(&b, 0, sizeof b);
    b.resolve = resolve;
    b.ncols = PyList_GET_SIZE(targets);
    int rc = BM_OK;
    /* The raw images' contexts: (plan, present columns bitmap), numbered by their place. */
    Py_ssize_t held = 0;
    b.ncontexts = PyTuple_GET_SIZE(ctxs);
    b.plans = PyMem_Calloc((size_t)(b.ncontexts + 1), sizeof *b.plans);
    b.present = PyMem_Calloc((size_t)(b.ncontexts + 1), sizeof *b.present);
    if (!b.plans || !b.present) { PyErr_NoMemory(); rc = BM_ERR_PY; }
    for (; rc == BM_OK && held < b.ncontexts; held++) {
        PyObject *pair = PyTuple_GET_ITEM(ctxs, held), *plan, *present;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !bm_is_plan(plan = PyTuple_GET_ITEM(pair, 0))) {
            PyErr_SetString(PyExc_TypeError, "typed_columns: contexts must be (plan, present) pairs");
            rc = BM_ERR_PY;
            break;
        }
        present = PyTuple_GET_ITEM(pair, 1);
        if (PyObject_GetBuffer(present, &b.present[held], PyBUF_SIMPLE) < 0) { rc = BM_ERR_PY; break; }
        b.plans[held] = (bm_plan *)plan;
    }
    b.cols = PyMem_Calloc((size_t)(b.ncols ? b.ncols : 1), sizeof *b.cols);
    b.labels = PyList_New(0);
    if (!b.cols || !b.labels) { PyErr_NoMemory(); rc = BM_ERR_PY; }
    for (Py_ssize_t j = 0; rc == BM_OK && j < b.ncols; j++) {
        tcol *c = &b.cols[j];
        if (!PyArg_ParseTuple(PyList_GET_ITEM(targets, j), "iii", &c->code, &c->precision, &c->scale)) {
            rc = BM_ERR_PY;
            break;
        }
        if (c->code < T_I32 || c->code > T_OTHER || c->precision < 0 || c->precision > 38 || c->scale < 0 ||
            c->scale > c->precision) {
            PyErr_SetString(PyExc_ValueError, "typed_columns: a target is not (code, precision, scale)");
            rc = BM_ERR_PY;
            break;
        }
#if HAVE_I128
        c->whole = pow10_128(c->precision - c->scale);
        c->unit = pow10_128(c->scale);
        c->above = pow10_128(c->precision);
#endif
        static const int widths[] = {0, 4, 8, 4, 8, 16, 4, 8, 8, 0, 0, 0};
        c->width = c->code == T_OTHER ? 1 : widths[c->code];    /* VECTOR: all nulls here, rebuilt by Python */
        /* Without a 128-bit integer type every DECIMAL value is handed back (put_integer, put_decimal_text). */
        if (!c->width) {
            int32_t zero = 0;
            if (bm_buf_put(&c->offsets, &zero, 4) != BM_OK) rc = BM_ERR_PY;
        }
    }
    /* The rows the caller counted (a hint: each buffer still grows as needed): the fixed-width buffers are
     * reserved once instead of moved by every doubling. Capped by the payloads' bytes, so a wrong hint
     * cannot reserve more than the input's size. */
    Py_ssize_t input = PyTuple_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
        if (PyBytes_Check(PyTuple_GET_ITEM(items, i))) input += PyBytes_GET_SIZE(PyTuple_GET_ITEM(items, i));
    if (expected > input) expected = input;
    if (rc == BM_OK && expected > 0) {
        for (Py_ssize_t j = 0; rc == BM_OK && j < b.ncols; j++) {
            tcol *c = &b.cols[j];
            c->expect = expected;
            c->limit = input;
            if (bm_buf_reserve(&c->valid, (expected + 7) / 8) != BM_OK ||
                (c->width ? bm_buf_reserve(&c->data, expected * c->width)
                          : bm_buf_reserve(&c->offsets, 4 * expected)) != BM_OK)
                rc = BM_ERR_PY;
        }
        if (rc == BM_OK && (bm_buf_reserve(&b.row_event, 4 * expected) != BM_OK ||
                            bm_buf_reserve(&b.row_index, 8 * expected) != BM_OK))
            rc = BM_ERR_PY;
    }
    for (Py_ssize_t i = 0; rc == BM_OK && i < PyTuple_GET_SIZE(items); i++) {
        PyObject *item = PyTuple_GET_ITEM(items, i);
        long version = PyLong_AsLong(PyTuple_GET_ITEM(vers, i));
        if (!PyBytes_Check(item) || (version == -1 && PyErr_Occurred()) || i > INT32_MAX) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "typed_columns: payloads must be bytes");
            rc = BM_ERR_PY;
            break;
        }
        rc = add_event(&b, (const unsigned char *)PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), image, version,
                       (int32_t)i);
    }
    for (Py_ssize_t j = 0; rc == BM_OK && j < b.ncols; j++) rc = col_pad(&b.cols[j], b.rows);
    PyObject *result = NULL;
    if (rc == BM_OK) {
        PyObject *columns = PyList_New(b.ncols);
        for (Py_ssize_t j = 0; columns && j < b.ncols; j++) {
            PyObject *col = column_result(&b.cols[j]);
            if (!col) { Py_CLEAR(columns); break; }
            PyList_SET_ITEM(columns, j, col);
        }
        if (columns) {
            result = Py_BuildValue("(nNNNO)", b.rows, bm_blob_from_buf(&b.row_event), bm_blob_from_buf(&b.row_index),
                                   columns, b.labels);
        }
    } else if (rc == BM_ERR_DATA && !PyErr_Occurred()) {
        result = Py_None;
        Py_INCREF(result);
    }
    for (Py_ssize_t j = 0; b.cols && j < b.ncols; j++) {
        bm_buf_free(&b.cols[j].valid);
        bm_buf_free(&b.cols[j].data);
        bm_buf_free(&b.cols[j].offsets);
        Py_XDECREF(b.cols[j].slow);
    }
    PyMem_Free(b.cols);
    for (Py_ssize_t k = 0; k < held; k++) PyBuffer_Release(&b.present[k]);
    PyMem_Free(b.present);
    PyMem_Free(b.plans);
    bm_walker_free(b.walker);
    bm_buf_free(&b.value);
    Py_DECREF(ctxs);
    PyMem_Free(b.known);
    PyMem_Free(b.at);
    bm_buf_free(&b.row_event);
    bm_buf_free(&b.row_index);
    Py_XDECREF(b.labels);
    Py_DECREF(items);
    Py_DECREF(vers);
    return result;
}
