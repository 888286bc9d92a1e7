/* The row builder: row images of one rows event -> the serialized protobuf ``Row`` of each row.
 *
 * Mirrors wire/rows.py (image walking: a NULL bitmap over the present columns, then the non-NULL values)
 * and the Python row builders (primary key from the first image holding every key column; INSERT after
 * image; DELETE always-included before image or all of it; UPDATE full / changed / changed_with_old / after).
 * Each image is first split into per-column slots (absent, NULL, or the value's byte span, every length
 * checked against the image end); the Row is then written from the slots. Any problem with the bytes returns
 * None to Python, which re-runs the reference builder on the event and raises its typed error.
 */
#include "json_text.h"
#include "values.h"
#include "proto_fields.h"

enum { S_ABSENT = 0, S_NULL = 1, S_VALUE = 2 };

typedef struct {
    int state;
    Py_ssize_t start;
    Py_ssize_t size;
    Py_ssize_t text;        /* a MySQL binary JSON value: its JSON text in ctx.json, from here ... */
    Py_ssize_t text_len;    /* ... for this many bytes */
} slot;

typedef struct {
    bm_plan *plan;
    const unsigned char *buf;
    bm_buf row, value, sa, sb;
    bm_buf json;            /* the JSON text of the current row's binary JSON values */
    int sizes_only;         /* row_images: only the values' sizes (the JSON is rendered when it is typed) */
} ctx;

enum { OP_INSERT = PB_BINLOG_EVENT_OPERATION_INSERT, OP_UPDATE = PB_BINLOG_EVENT_OPERATION_UPDATE,
       OP_DELETE = PB_BINLOG_EVENT_OPERATION_DELETE };
/* Row, Column and the framing field BinlogEvent.rows are written a tag byte at a time (proto_fields.h). */
_Static_assert(PB_ROW_ROW_INDEX_TAG_LEN == 1 && PB_ROW_PRIMARY_KEY_TAG_LEN == 1 && PB_ROW_BEFORE_TAG_LEN == 1 &&
               PB_ROW_AFTER_TAG_LEN == 1 && PB_COLUMN_NAME_TAG_LEN == 1 && PB_COLUMN_VALUE_TAG_LEN == 1 &&
               PB_COLUMN_INVISIBLE_TAG_LEN == 1 && PB_BINLOG_EVENT_ROWS_TAG_LEN == 1 &&
               PB_VALUE_JSON_VALUE_TAG_LEN == 1,
               "a Row/Column tag outgrew one byte: rows.c writes them as single bytes");
enum { IMG_FULL = 0, IMG_CHANGED = 1, IMG_CHANGED_WITH_OLD = 2, IMG_AFTER = 3 };

static inline unsigned char *write_varint(unsigned char *w, uint64_t v) {
    while (v >= 0x80) { *w++ = (unsigned char)(v | 0x80); v >>= 7; }
    *w++ = (unsigned char)v;
    return w;
}

static int parse_image(ctx *x, Py_ssize_t *pos, Py_ssize_t end, const unsigned char *present, slot *slots) {
    bm_plan *plan = x->plan;
    const unsigned char *buf = x->buf;
    Py_ssize_t npresent = 0;
    for (Py_ssize_t i = 0; i < plan->ncols; i++)
        if (present[i >> 3] & (1 << (i & 7))) npresent++;
    Py_ssize_t nbytes = (npresent + 7) >> 3;
    Py_ssize_t p = *pos;
    if (end - p < nbytes) return BM_ERR_DATA;
    const unsigned char *nulls = buf + p;
    p += nbytes;
    Py_ssize_t k = 0;
    for (Py_ssize_t i = 0; i < plan->ncols; i++) {
        if (!(present[i >> 3] & (1 << (i & 7)))) {
            slots[i].state = S_ABSENT;
            continue;
        }
        if (nulls[k >> 3] & (1 << (k & 7))) {
            slots[i].state = S_NULL;
        } else {
            Py_ssize_t size;
            const bm_col *c = &plan->cols[i];
            if (bm_value_size(c, buf + p, end - p, &size)) return BM_ERR_DATA;
            slots[i].state = S_VALUE;
            slots[i].start = p;
            slots[i].size = size;
            if (c->wire == W_JSON && !x->sizes_only) {
                /* Rendered now, emitted or not: the Python decoder parses every JSON value of the image,
                 * so a document it refuses must send the event to it even when the column is not shown. */
                Py_ssize_t at = x->json.len;
                int rc = bm_json_to_text(buf + p + c->wmeta, size - c->wmeta, &x->json);
                if (rc) return rc;
                slots[i].text = at;
                slots[i].text_len = x->json.len - at;
            }
            p += size;
        }
        k++;
    }
    *pos = p;
    return BM_OK;
}

/* A column's slot as the walker's entry: NULL, or its bytes (and a binary JSON value's rendered text). */
static inline bm_entry slot_entry(const ctx *x, const bm_col *c, const slot *s) {
    bm_entry e = {c, s->state == S_NULL, NULL, 0, NULL, 0};
    if (!e.null) {
        e.raw = x->buf + s->start;
        e.size = s->size;
        if (c->wire == W_JSON) {
            e.json = x->json.data + s->text;
            e.json_len = s->text_len;
        }
    }
    return e;
}

/* One Column{name, value, invisible} as field `tag` of the Row. Absent and hidden columns are not written. */
static int put_column(ctx *x, unsigned char tag, Py_ssize_t i, const slot *s) {
    const bm_col *c = &x->plan->cols[i];
    if (s->state == S_ABSENT || c->mark == 2) return BM_OK;
    bm_buf *v = &x->value;
    v->len = 0;
    bm_entry e = slot_entry(x, c, s);
    int rc = bm_entry_value(&e, v);
    if (rc) return rc;
    Py_ssize_t clen = PB_COLUMN_VALUE_TAG_LEN + bm_varint_size((uint64_t)v->len) + v->len;
    if (c->name.len) clen += PB_COLUMN_NAME_TAG_LEN + bm_varint_size((uint64_t)c->name.len) + c->name.len;
    if (c->mark == 1) clen += PB_COLUMN_INVISIBLE_TAG_LEN + 1;    /* invisible: true */
    bm_buf *r = &x->row;
    if (bm_buf_byte(r, tag) || bm_buf_varint(r, (uint64_t)clen)) return BM_ERR_PY;
    if (c->name.len && (bm_buf_byte(r, PB_COLUMN_NAME_TAG) || bm_buf_varint(r, (uint64_t)c->name.len) ||
                        bm_buf_put(r, c->name.ptr, c->name.len)))
        return BM_ERR_PY;
    if (bm_buf_byte(r, PB_COLUMN_VALUE_TAG) || bm_buf_varint(r, (uint64_t)v->len) ||
        bm_buf_put(r, v->data, v->len))
        return BM_ERR_PY;
    if (c->mark == 1 && (bm_buf_byte(r, PB_COLUMN_INVISIBLE_TAG) || bm_buf_byte(r, 0x01))) return BM_ERR_PY;
    return BM_OK;
}

static int put_all(ctx *x, unsigned char tag, const slot *slots) {
    for (Py_ssize_t i = 0; i < x->plan->ncols; i++) {
        int rc = put_column(x, tag, i, &slots[i]);
        if (rc) return rc;
    }
    return BM_OK;
}

/* The primary key from the first image that has every key column (NULL counts as present). */
static int put_primary_key(ctx *x, const slot *first, const slot *second) {
    bm_plan *plan = x->plan;
    const slot *images[2] = {first, second};
    for (int m = 0; m < 2; m++) {
        const slot *img = images[m];
        if (!img) break;
        int complete = 1;
        for (Py_ssize_t k = 0; k < plan->npk; k++)
            if (img[plan->pk[k]].state == S_ABSENT) complete = 0;
        if (!complete) continue;
        for (Py_ssize_t k = 0; k < plan->npk; k++) {
            int rc = put_column(x, PB_ROW_PRIMARY_KEY_TAG, plan->pk[k], &img[plan->pk[k]]);
            if (rc) return rc;
        }
        return BM_OK;
    }
    return BM_OK;
}

static int put_update(ctx *x, int image_mode, const slot *before, const slot *after, char *changed,
                      const char *is_always) {
    bm_plan *plan = x->plan;
    if (image_mode == IMG_FULL) {
        int rc = put_all(x, PB_ROW_BEFORE_TAG, before);
        return rc ? rc : put_all(x, PB_ROW_AFTER_TAG, after);
    }
    if (image_mode == IMG_AFTER) return put_all(x, PB_ROW_AFTER_TAG, after);
    for (Py_ssize_t i = 0; i < plan->ncols; i++) {
        changed[i] = 0;
        if (after[i].state == S_ABSENT) continue;
        const slot *b = &before[i], *a = &after[i];
        if (b->state == S_ABSENT || b->state != a->state) {
            changed[i] = 1;
        } else if (a->state == S_VALUE && plan->cols[i].wire == W_JSON) {
            /* JsonDocument equality: the rendered texts */
            changed[i] = a->text_len != b->text_len ||
                         (a->text_len && memcmp(x->json.data + a->text, x->json.data + b->text,
                                                (size_t)a->text_len) != 0);
        } else if (a->state == S_VALUE) {
            int d = bm_values_differ(&plan->cols[i], x->buf + b->start, b->size, x->buf + a->start, a->size,
                                     &x->sa, &x->sb);
            if (d < 0) return d;
            changed[i] = (char)d;
        }
    }
    for (Py_ssize_t i = 0; i < plan->ncols; i++) {
        if (!(is_always[i] || (image_mode == IMG_CHANGED_WITH_OLD && changed[i]))) continue;
        /* An always-included column missing from the before image (MINIMAL) comes from the after image. */
        const slot *s = before[i].state != S_ABSENT ? &before[i] : &after[i];
        int rc = put_column(x, PB_ROW_BEFORE_TAG, i, s);
        if (rc) return rc;
    }
    for (Py_ssize_t i = 0; i < plan->ncols; i++) {
        if (!changed[i]) continue;
        int rc = put_column(x, PB_ROW_AFTER_TAG, i, &after[i]);
        if (rc) return rc;
    }
    return BM_OK;
}

/* (list, end position) for BM_OK, None for BM_ERR_DATA, NULL (the exception set) for BM_ERR_PY; the list is
 * the caller's (NULL when it could not be made). */
static PyObject *rows_result(int rc, PyObject *list, Py_ssize_t pos) {
    if (rc == BM_ERR_PY) {
        Py_XDECREF(list);
        return NULL;
    }
    if (rc == BM_ERR_DATA) {
        Py_DECREF(list);
        Py_RETURN_NONE;
    }
    return Py_BuildValue("(Nn)", list, pos);
}

/* Whether the present bitmaps cover the plan's columns (an UPDATE's both) and [pos, end) is a range. */
static int images_fit(const bm_plan *plan, Py_ssize_t pos, Py_ssize_t end, Py_ssize_t present_len,
                      const unsigned char *present_after, Py_ssize_t present_after_len, int operation) {
    Py_ssize_t need = (plan->ncols + 7) >> 3;
    return present_len >= need && (operation != OP_UPDATE || (present_after && present_after_len >= need)) &&
           pos >= 0 && pos <= end;
}

PyObject *bm_build_rows(bm_plan *plan, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end,
                        const unsigned char *present, Py_ssize_t present_len,
                        const unsigned char *present_after, Py_ssize_t present_after_len,
                        int operation, int image_mode, uint64_t first_row_index) {
    Py_ssize_t n = plan->ncols;
    if (!images_fit(plan, pos, end, present_len, present_after, present_after_len, operation)) Py_RETURN_NONE;
    ctx x;
    x.plan = plan;
    x.buf = buf;
    x.sizes_only = 0;
    bm_buf_init(&x.row);
    bm_buf_init(&x.value);
    bm_buf_init(&x.sa);
    bm_buf_init(&x.sb);
    bm_buf_init(&x.json);
    PyObject *list = PyList_New(0);
    slot *before = PyMem_Calloc((size_t)(2 * n + 1), sizeof(slot));
    char *flags = PyMem_Calloc((size_t)(2 * n + 1), 1);
    int rc = BM_OK;
    if (!list || !before || !flags) {
        if (list) PyErr_NoMemory();
        rc = BM_ERR_PY;
        goto done;
    }
    slot *after = before + n;
    char *changed = flags, *is_always = flags + n;
    for (Py_ssize_t k = 0; k < plan->nalways; k++) is_always[plan->always[k]] = 1;
    uint64_t index = first_row_index;
    while (pos < end) {
        Py_ssize_t start = pos;
        x.json.len = 0;
        if ((rc = parse_image(&x, &pos, end, present, before))) goto done;
        if (operation == OP_UPDATE && (rc = parse_image(&x, &pos, end, present_after, after))) goto done;
        if (pos == start) { rc = BM_ERR_DATA; goto done; }   /* an empty image would never end */
        x.row.len = 0;
        if (index && (bm_buf_byte(&x.row, PB_ROW_ROW_INDEX_TAG) || bm_buf_varint(&x.row, index))) {
            rc = BM_ERR_PY;
            goto done;
        }
        if (operation == OP_INSERT) {
            if ((rc = put_primary_key(&x, before, NULL)) || (rc = put_all(&x, PB_ROW_AFTER_TAG, before)))
                goto done;
        } else if (operation == OP_DELETE) {
            if ((rc = put_primary_key(&x, before, NULL))) goto done;
            if (image_mode == IMG_FULL || image_mode == IMG_AFTER) {
                rc = put_all(&x, PB_ROW_BEFORE_TAG, before);
            } else {
                for (Py_ssize_t k = 0; k < plan->nalways && !rc; k++)
                    rc = put_column(&x, PB_ROW_BEFORE_TAG, plan->always[k], &before[plan->always[k]]);
            }
            if (rc) goto done;
        } else {
            if ((rc = put_primary_key(&x, before, after))) goto done;
            if ((rc = put_update(&x, image_mode, before, after, changed, is_always))) goto done;
        }
        /* Framed as one entry of BinlogEvent.rows: the event's bytes are then a concatenation. */
        int vs = bm_varint_size((uint64_t)x.row.len);
        PyObject *row = PyBytes_FromStringAndSize(NULL, PB_BINLOG_EVENT_ROWS_TAG_LEN + vs + x.row.len);
        if (row) {
            unsigned char *w = (unsigned char *)PyBytes_AS_STRING(row);
            *w++ = PB_BINLOG_EVENT_ROWS_TAG;
            w = write_varint(w, (uint64_t)x.row.len);
            if (x.row.len) memcpy(w, x.row.data, (size_t)x.row.len);   /* an empty Row: no data yet */
        }
        if (!row || PyList_Append(list, row) < 0) {
            Py_XDECREF(row);
            rc = BM_ERR_PY;
            goto done;
        }
        Py_DECREF(row);
        index++;
    }
done:
    PyMem_Free(before);
    PyMem_Free(flags);
    bm_buf_free(&x.row);
    bm_buf_free(&x.value);
    bm_buf_free(&x.sa);
    bm_buf_free(&x.sb);
    bm_buf_free(&x.json);
    return rows_result(rc, list, pos);
}

/* -- the resolve job's raw row images ------------------------------------------------------------------- */

/* One framed entry of field BM_RAW_ROWS: [context][row_index][the image's bytes]. */
static int put_raw_frame(PyObject *list, Py_ssize_t context, uint64_t row_index, const unsigned char *image,
                         Py_ssize_t n) {
    Py_ssize_t body = bm_varint_size((uint64_t)context) + bm_varint_size(row_index) + n;
    Py_ssize_t size = bm_varint_size(BM_RAW_ROWS_TAG) + bm_varint_size((uint64_t)body) + body;
    PyObject *frame = PyBytes_FromStringAndSize(NULL, size);
    if (!frame) return BM_ERR_PY;
    unsigned char *w = (unsigned char *)PyBytes_AS_STRING(frame);
    w = write_varint(w, BM_RAW_ROWS_TAG);
    w = write_varint(w, (uint64_t)body);
    w = write_varint(w, (uint64_t)context);
    w = write_varint(w, row_index);
    if (n) memcpy(w, image, (size_t)n);
    int rc = PyList_Append(list, frame) == 0 ? BM_OK : BM_ERR_PY;
    Py_DECREF(frame);
    return rc;
}

PyObject *bm_row_images(bm_plan *plan, const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end,
                        const unsigned char *present, Py_ssize_t present_len,
                        const unsigned char *present_after, Py_ssize_t present_after_len,
                        int operation, Py_ssize_t context, uint64_t first_row_index) {
    Py_ssize_t n = plan->ncols;
    if (!images_fit(plan, pos, end, present_len, present_after, present_after_len, operation) || context < 0)
        Py_RETURN_NONE;
    ctx x;
    memset(&x, 0, sizeof x);
    x.plan = plan;
    x.buf = buf;
    x.sizes_only = 1;
    PyObject *list = PyList_New(0);
    slot *slots = PyMem_Calloc((size_t)(n + 1), sizeof(slot));
    int rc = BM_OK;
    if (!list || !slots) {
        if (list) PyErr_NoMemory();
        rc = BM_ERR_PY;
        goto done;
    }
    uint64_t index = first_row_index;
    while (pos < end) {
        Py_ssize_t start = pos;
        /* An UPDATE's before image is never typed: its JSON documents are rendered here, as build_rows
         * renders them, so a document the decoder refuses still sends the slice the reference way. */
        x.json.len = 0;
        x.sizes_only = operation != OP_UPDATE;
        if ((rc = parse_image(&x, &pos, end, present, slots))) goto done;
        Py_ssize_t image = start;            /* INSERT: its after image; DELETE: its before image */
        if (operation == OP_UPDATE) {
            image = pos;                     /* UPDATE: the after image, read after the before image */
            x.sizes_only = 1;
            if ((rc = parse_image(&x, &pos, end, present_after, slots))) goto done;
        }
        if (pos == start) { rc = BM_ERR_DATA; goto done; }
        if ((rc = put_raw_frame(list, context, index, buf + image, pos - image))) goto done;
        index++;
    }
done:
    PyMem_Free(slots);
    bm_buf_free(&x.json);
    return rows_result(rc, list, pos);
}

int bm_entry_value(const bm_entry *e, bm_buf *out) {
    if (e->null) return bm_put_null(out);
    if (e->col->wire == W_JSON)       /* json_value: the text rendered while the image was read */
        return bm_buf_byte(out, PB_VALUE_JSON_VALUE_TAG) || bm_buf_varint(out, (uint64_t)e->json_len) ||
               bm_buf_put(out, e->json, e->json_len) ? BM_ERR_PY : BM_OK;
    return bm_put_value(e->col, e->raw, e->size, out);
}

struct bm_walker {
    ctx x;
    slot *slots;
    Py_ssize_t nslots;
};

bm_walker *bm_walker_new(void) {
    bm_walker *w = PyMem_Calloc(1, sizeof *w);
    if (!w) PyErr_NoMemory();
    return w;
}

void bm_walker_free(bm_walker *w) {
    if (!w) return;
    bm_buf_free(&w->x.value);
    bm_buf_free(&w->x.json);
    PyMem_Free(w->slots);
    PyMem_Free(w);
}

int bm_walk_image(bm_walker *w, bm_plan *plan, const unsigned char *image, Py_ssize_t len,
                  const unsigned char *present, Py_ssize_t present_len, bm_entry_fn fn, void *arg) {
    Py_ssize_t n = plan->ncols;
    if (present_len < ((n + 7) >> 3)) return BM_ERR_DATA;
    if (w->nslots < n + 1) {
        slot *slots = PyMem_Realloc(w->slots, (size_t)(n + 1) * sizeof(slot));
        if (!slots) { PyErr_NoMemory(); return BM_ERR_PY; }
        w->slots = slots;
        w->nslots = n + 1;
    }
    ctx *x = &w->x;
    x->plan = plan;
    x->buf = image;
    x->sizes_only = 0;
    x->json.len = 0;
    Py_ssize_t pos = 0;
    int rc = parse_image(x, &pos, len, present, w->slots);
    if (rc) return rc;
    if (pos != len) return BM_ERR_DATA;
    /* put_all's columns, in its order (put_column without the Column around them). */
    for (Py_ssize_t i = 0; i < n; i++) {
        const slot *s = &w->slots[i];
        const bm_col *c = &plan->cols[i];
        if (s->state == S_ABSENT || c->mark == 2) continue;
        bm_entry e = slot_entry(x, c, s);
        if ((rc = fn(arg, &e))) return rc;
    }
    return BM_OK;
}
