/* A serialized BinlogEvent's row images -> the replica's Python values per column, for ``apply``'s batches
 * (binlog_model/replica/batch.py).
 *
 * Why: the replica's writer walked every value of every image through protobuf messages in Python
 * (``TableBatch._image``): the largest part of ``apply``'s time once the events are decoded in C.
 *
 * The reference is ``TableBatch._image``. For each row this gives what it gives for the row's after image
 * (values, names of the values the type cannot hold) and its before image (values, read for the plan's
 * ``reads`` alone). Where this code would not do exactly what the reference does (a kind of value it has no
 * rule for, a JSON diff, a name it cannot look up as the reference does, bytes it cannot read) it returns
 * None and the caller runs the reference on the whole event. Every read is inside the event's bytes,
 * checked before it is made (pb_wire.h).
 */
#include "replica_images.h"

#include <datetime.h>
#include <stdint.h>
#include <string.h>

#include "pb_wire.h"

enum { KINDS = 21, K_NULL = 1, K_DATETIME = 9, K_DATE = 10, K_DECIMAL = 6, K_JSON_DIFF = 20 };
enum { S_NONE = 0, S_NAIVE = 1, S_DATE = 2, S_DECIMAL = 3 };
enum { RI_OK = 0, RI_FALLBACK = 1, RI_ERROR = 2 };

typedef struct {
    uint32_t exact;                 /* bit k: a value of kind k is the column's value as it is */
    int special;                    /* S_*: kinds converted here */
    int precision, scale;           /* S_DECIMAL */
    PyObject *shortcuts[KINDS];     /* kind -> the reference's shortcut for it (borrowed from the plan) */
} rp_column;

typedef struct {
    Py_ssize_t ncols;
    PyObject *source;               /* the plan tuple: owns every object below */
    PyObject *lookup;               /* dict: name bytes -> index (the reference's ``_by_name``) */
    PyObject *lower_lookup;         /* dict: lower-case name bytes -> index (the reference's ``_index``) */
    PyObject *names;                /* tuple: each column's exact name as bytes */
    PyObject *layout_names;         /* tuple: each column's name (str), for the invalid set */
    PyObject *missing, *invalid_exc, *decimal_type;
    unsigned char *reads;           /* NULL: every column of a before image; else a flag per column */
    Py_ssize_t nreads;
    rp_column *cols;
} rp_plan;

static const char CAPSULE[] = "binlog_model._speedups.replica_plan";

static void plan_free(PyObject *capsule) {
    rp_plan *plan = PyCapsule_GetPointer(capsule, CAPSULE);
    if (!plan) return;
    Py_XDECREF(plan->source);
    PyMem_Free(plan->reads);
    PyMem_Free(plan->cols);
    PyMem_Free(plan);
}

/* replica_plan((lookup, lower_lookup, names, layout_names, missing, invalid_exc, decimal_type, reads,
 * columns)) where
 * columns[i] = (exact_mask, special, precision, scale, shortcuts: tuple of KINDS callables or None) and reads
 * is None or a bytes of a flag per column. */
PyObject *bm_py_replica_plan(PyObject *self, PyObject *arg) {
    PyObject *lookup, *lower_lookup, *names, *layout_names, *missing, *invalid_exc, *decimal_type, *reads, *columns;
    if (!PyTuple_Check(arg) || !PyArg_ParseTuple(arg, "O!O!O!O!OOOOO!:replica_plan", &PyDict_Type, &lookup,
                                                  &PyDict_Type, &lower_lookup,
                                                  &PyTuple_Type, &names, &PyTuple_Type, &layout_names,
                                                  &missing, &invalid_exc, &decimal_type, &reads,
                                                  &PyTuple_Type, &columns))
        return PyErr_Occurred() ? NULL : (PyErr_SetString(PyExc_TypeError, "replica_plan: a tuple"), NULL);
    Py_ssize_t n = PyTuple_GET_SIZE(columns);
    if (PyTuple_GET_SIZE(names) != n || PyTuple_GET_SIZE(layout_names) != n
        || (reads != Py_None && (!PyBytes_Check(reads) || PyBytes_GET_SIZE(reads) != n))) {
        PyErr_SetString(PyExc_TypeError, "replica_plan: names, layout names and reads need a column each");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyBytes_Check(PyTuple_GET_ITEM(names, i))) {
            PyErr_SetString(PyExc_TypeError, "replica_plan: names are bytes");
            return NULL;
        }
    }
    rp_plan *plan = PyMem_Calloc(1, sizeof(rp_plan));
    if (!plan) return PyErr_NoMemory();
    plan->ncols = n;
    plan->cols = PyMem_Calloc(n ? (size_t)n : 1, sizeof(rp_column));
    if (!plan->cols) {
        PyMem_Free(plan);
        return PyErr_NoMemory();
    }
    if (reads != Py_None) {
        plan->reads = PyMem_Malloc(n ? (size_t)n : 1);
        if (!plan->reads) {
            PyMem_Free(plan->cols);
            PyMem_Free(plan);
            return PyErr_NoMemory();
        }
        memcpy(plan->reads, PyBytes_AS_STRING(reads), (size_t)n);
        for (Py_ssize_t i = 0; i < n; i++) plan->nreads += plan->reads[i] != 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        rp_column *c = &plan->cols[i];
        unsigned long exact;
        PyObject *shortcuts;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(columns, i), "kiiiO!:replica_plan column", &exact, &c->special,
                              &c->precision, &c->scale, &PyTuple_Type, &shortcuts)
            || PyTuple_GET_SIZE(shortcuts) != KINDS || c->precision < 0 || c->scale < 0
            || c->scale > c->precision) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "replica_plan: a bad column");
            PyMem_Free(plan->reads);
            PyMem_Free(plan->cols);
            PyMem_Free(plan);
            return NULL;
        }
        c->exact = (uint32_t)exact;
        for (int k = 0; k < KINDS; k++) {
            PyObject *f = PyTuple_GET_ITEM(shortcuts, k);
            c->shortcuts[k] = f == Py_None ? NULL : f;
        }
    }
    plan->lookup = lookup;
    plan->lower_lookup = lower_lookup;
    plan->names = names;
    plan->layout_names = layout_names;
    plan->missing = missing;
    plan->invalid_exc = invalid_exc;
    plan->decimal_type = decimal_type;
    Py_INCREF(arg);
    plan->source = arg;
    PyObject *capsule = PyCapsule_New(plan, CAPSULE, plan_free);
    if (!capsule) {
        Py_DECREF(arg);
        PyMem_Free(plan->reads);
        PyMem_Free(plan->cols);
        PyMem_Free(plan);
    }
    return capsule;
}

/* The reference's ``fits``: optional '-', an integer part whose digits without leading zeros are at most
 * precision - scale, then '.' and exactly scale digits (none when scale is 0). */
static int decimal_fits(const unsigned char *s, Py_ssize_t n, int precision, int scale) {
    Py_ssize_t p = 0;
    if (p < n && s[p] == '-') p++;
    Py_ssize_t start = p;
    while (p < n && s[p] == '0') p++;
    Py_ssize_t digits = p;
    while (p < n && s[p] >= '0' && s[p] <= '9') p++;
    if (p == start || p - digits > precision - scale) return 0;
    if (!scale) return p == n;
    if (p >= n || s[p] != '.' || n - p - 1 != scale) return 0;
    for (p++; p < n; p++)
        if (s[p] < '0' || s[p] > '9') return 0;
    return 1;
}

/* A Date or DateTime message's fields (1.. up to 7, uint32), or -1 for bytes it cannot read. */
static int civil_fields(const unsigned char *p, const unsigned char *end, uint64_t out[7], int count) {
    memset(out, 0, 7 * sizeof(uint64_t));
    while (p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK || f.wire != WT_VARINT || f.number < 1 || (int)f.number > count
            || f.num > UINT32_MAX)
            return -1;
        out[f.number - 1] = f.num;
    }
    return 0;
}

/* A Python exception the reference turns into an invalid value (its shortcuts' ValueError and
 * OverflowError of the date and time constructors). */
static int civil_invalid(void) {
    if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
        PyErr_Clear();
        return 1;
    }
    return 0;
}

/* The field's value as ``getattr(value, kind)`` gives it, for the scalar kinds; NULL with *status
 * RI_FALLBACK (no exception) where the kind is a message or the field is not what the kind's wire is. */
static PyObject *scalar(uint32_t kind, const pb_field *f, int *status) {
    *status = RI_FALLBACK;
    switch (kind) {
    case 2:
        if (f->wire != WT_VARINT) return NULL;
        *status = RI_ERROR;
        return PyLong_FromLong((long)(int32_t)(uint32_t)f->num);
    case 3: case 11: case 12:
        if (f->wire != WT_VARINT) return NULL;
        *status = RI_ERROR;
        return PyLong_FromLongLong((long long)(int64_t)f->num);
    case 13: case 16:
        if (f->wire != WT_VARINT) return NULL;
        *status = RI_ERROR;
        return PyLong_FromUnsignedLongLong((unsigned long long)f->num);
    case 4: case 6: case 14: {
        if (f->wire != WT_LEN) return NULL;
        PyObject *s = PyUnicode_DecodeUTF8((const char *)f->data, f->len, NULL);
        if (!s) PyErr_Clear();          /* the reference's parse would have refused it: its error */
        else *status = RI_ERROR;
        return s;
    }
    case 5:
        if (f->wire != WT_LEN) return NULL;
        *status = RI_ERROR;
        return PyBytes_FromStringAndSize((const char *)f->data, f->len);
    case 7: {
        if (f->wire != WT_I64) return NULL;
        double d;
        memcpy(&d, f->data, 8);
        *status = RI_ERROR;
        return PyFloat_FromDouble(d);
    }
    case 8: {
        if (f->wire != WT_I32) return NULL;
        float v;
        memcpy(&v, f->data, 4);
        *status = RI_ERROR;
        return PyFloat_FromDouble((double)v);
    }
    default:
        return NULL;
    }
}

/* One column's value (``value`` is the Value message's bytes, NULL when the column has none) into
 * ``values[i]``; an after image's value the type cannot hold adds the column's name to ``invalid``. */
static int convert(rp_plan *plan, Py_ssize_t i, const unsigned char *value, const unsigned char *vend,
                   PyObject *values, PyObject *invalid) {
    uint32_t kind = 0, seen = 0;
    pb_field last = {0};
    if (value) {
        const unsigned char *p = value;
        while (p < vend) {
            pb_field f;
            /* a kind given twice: the parser merges a message kind's two fields, not here */
            if (read_field(&p, vend, &f) != BM_OK || f.number >= KINDS || (seen & (1u << f.number)))
                return RI_FALLBACK;
            seen |= 1u << f.number;
            kind = f.number;
            last = f;
        }
    }
    PyObject *out;
    if (kind == 0 || kind == K_NULL) {
        out = Py_NewRef(Py_None);
    } else if (kind == K_JSON_DIFF) {
        return RI_FALLBACK;
    } else {
        rp_column *c = &plan->cols[i];
        int status;
        if (c->exact & (1u << kind)) {
            out = scalar(kind, &last, &status);
            if (!out) return status;
        } else if ((c->special == S_NAIVE && kind == K_DATETIME) || (c->special == S_DATE && kind == K_DATE)) {
            uint64_t v[7];
            if (last.wire != WT_LEN || civil_fields(last.data, last.data + last.len, v, kind == K_DATE ? 3 : 7))
                return RI_FALLBACK;
            int fits = 1;
            for (int k = 0; k < 7; k++) fits &= v[k] <= INT32_MAX;
            if (!fits) {
                out = NULL;     /* the constructor's OverflowError: invalid */
            } else if (kind == K_DATE) {
                out = PyDate_FromDate((int)v[0], (int)v[1], (int)v[2]);
            } else {
                out = PyDateTime_FromDateAndTime((int)v[0], (int)v[1], (int)v[2], (int)v[3], (int)v[4], (int)v[5],
                                                 (int)v[6]);
            }
            if (!out && fits && !civil_invalid()) return RI_ERROR;
            if (!out) {
                out = Py_NewRef(Py_None);
                if (invalid && PySet_Add(invalid, PyTuple_GET_ITEM(plan->layout_names, i)) < 0) {
                    Py_DECREF(out);
                    return RI_ERROR;
                }
            }
        } else {
            PyObject *shortcut = c->shortcuts[kind];
            if (!shortcut) return RI_FALLBACK;       /* the reference's message_value */
            PyObject *raw = scalar(kind, &last, &status);
            if (!raw) return status;
            if (c->special == S_DECIMAL && kind == K_DECIMAL
                && decimal_fits(last.data, last.len, c->precision, c->scale))
                out = PyObject_CallOneArg(plan->decimal_type, raw);
            else
                out = PyObject_CallOneArg(shortcut, raw);
            Py_DECREF(raw);
            if (!out) {
                if (!PyErr_ExceptionMatches(plan->invalid_exc)) return RI_ERROR;
                PyErr_Clear();
                out = Py_NewRef(Py_None);
                if (invalid && PySet_Add(invalid, PyTuple_GET_ITEM(plan->layout_names, i)) < 0) {
                    Py_DECREF(out);
                    return RI_ERROR;
                }
            }
        }
    }
    PyList_SetItem(values, i, out);     /* steals out; the item it replaces is the plan's MISSING */
    return RI_OK;
}

/* The index of a column named [name, name + n), as the reference looks it up: its exact name (the one
 * expected next first), else its lower-case name (ASCII); -1 for a name that is no column's (skipped), -2 for one
 * the reference might find where this cannot (not ASCII), -3 with an exception set. */
static Py_ssize_t column_index(rp_plan *plan, const unsigned char *name, Py_ssize_t n, Py_ssize_t expected) {
    if (expected < plan->ncols) {
        PyObject *e = PyTuple_GET_ITEM(plan->names, expected);
        if (PyBytes_GET_SIZE(e) == n && !memcmp(PyBytes_AS_STRING(e), name, (size_t)n)) return expected;
    }
    PyObject *key = PyBytes_FromStringAndSize((const char *)name, n);
    if (!key) return -3;
    PyObject *found = PyDict_GetItemWithError(plan->lookup, key);
    Py_DECREF(key);
    if (!found && PyErr_Occurred()) return -3;
    if (!found) {
        unsigned char lower[256];
        if (n > (Py_ssize_t)sizeof lower) return -2;
        for (Py_ssize_t k = 0; k < n; k++) {
            if (name[k] >= 0x80) return -2;
            lower[k] = name[k] >= 'A' && name[k] <= 'Z' ? (unsigned char)(name[k] + 32) : name[k];
        }
        key = PyBytes_FromStringAndSize((const char *)lower, n);
        if (!key) return -3;
        found = PyDict_GetItemWithError(plan->lower_lookup, key);
        Py_DECREF(key);
        if (!found) return PyErr_Occurred() ? -3 : -1;
    }
    Py_ssize_t i = PyLong_AsSsize_t(found);
    if (i == -1 && PyErr_Occurred()) return -3;
    return i >= 0 && i < plan->ncols ? i : -2;
}

/* One image (the Row's repeated Column fields numbered ``number``) into a new list of the plan's width. */
static int image(rp_plan *plan, const unsigned char *row, const unsigned char *rend, uint32_t number,
                 int before, PyObject **values_out, PyObject **invalid_out) {
    PyObject *values = PyList_New(plan->ncols);
    if (!values) return RI_ERROR;
    for (Py_ssize_t i = 0; i < plan->ncols; i++) PyList_SET_ITEM(values, i, Py_NewRef(plan->missing));
    PyObject *invalid = NULL;
    if (!before && !(invalid = PySet_New(NULL))) {
        Py_DECREF(values);
        return RI_ERROR;
    }
    const unsigned char *reads = before ? plan->reads : NULL;
    Py_ssize_t wanted = reads ? plan->nreads : -1, found = 0, expected = 0;
    const unsigned char *p = row;
    int status = RI_OK;
    while (p < rend) {
        pb_field f;
        if (read_field(&p, rend, &f) != BM_OK) {
            status = RI_FALLBACK;
            break;
        }
        if (f.number != number) continue;
        if (f.wire != WT_LEN) {
            status = RI_FALLBACK;
            break;
        }
        if (found == wanted) break;     /* a before image read for its key: each of them was read */
        const unsigned char *name = NULL, *value = NULL, *vend = NULL, *c = f.data, *cend = f.data + f.len;
        Py_ssize_t name_len = 0;
        int values_seen = 0;
        while (c < cend) {
            pb_field g;
            if (read_field(&c, cend, &g) != BM_OK) {
                status = RI_FALLBACK;
                break;
            }
            if (g.number == 1 && g.wire == WT_LEN) {
                name = g.data;
                name_len = g.len;
            } else if (g.number == 2 && g.wire == WT_LEN) {
                value = g.data;
                vend = g.data + g.len;
                values_seen++;
            } else if (!(g.number == 3 && g.wire == WT_VARINT)) {
                status = RI_FALLBACK;
                break;
            }
        }
        if (status != RI_OK) break;
        if (values_seen > 1) {      /* a message field given twice is merged by the parser: not here */
            status = RI_FALLBACK;
            break;
        }
        Py_ssize_t i = column_index(plan, name ? name : (const unsigned char *)"", name_len, expected);
        if (i == -1) continue;      /* an invisible or hidden column: not in SELECT * */
        if (i < 0) {
            status = i == -2 ? RI_FALLBACK : RI_ERROR;
            break;
        }
        expected = i + 1;
        if (reads) {
            if (!reads[i]) continue;
            found++;
        }
        status = convert(plan, i, value, vend, values, invalid);
        if (status != RI_OK) break;
    }
    if (status != RI_OK) {
        Py_DECREF(values);
        Py_XDECREF(invalid);
        return status;
    }
    *values_out = values;
    *invalid_out = invalid;
    return RI_OK;
}

/* replica_images(event: bytes, operation, plan) -> None | [(before values | None, after values | None,
 * after's invalid names | None), ...] a row each: before for UPDATE and DELETE (2, 3), after for INSERT
 * and UPDATE (1, 2). */
PyObject *bm_py_replica_images(PyObject *self, PyObject *args) {
    Py_buffer view;
    int operation;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "y*iO:replica_images", &view, &operation, &capsule)) return NULL;
    rp_plan *plan = PyCapsule_GetPointer(capsule, CAPSULE);
    if (!plan) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (!PyDateTimeAPI) {
        PyDateTime_IMPORT;
        if (!PyDateTimeAPI) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    int want_before = operation == 2 || operation == 3, want_after = operation == 1 || operation == 2;
    PyObject *rows = PyList_New(0);
    int status = rows ? RI_OK : RI_ERROR;
    const unsigned char *p = view.buf, *end = p + view.len;
    while (status == RI_OK && p < end) {
        pb_field f;
        if (read_field(&p, end, &f) != BM_OK) {
            status = RI_FALLBACK;
            break;
        }
        if (f.number != 11) continue;
        if (f.wire != WT_LEN) {
            status = RI_FALLBACK;
            break;
        }
        PyObject *before = NULL, *after = NULL, *invalid = NULL, *unused = NULL;
        if (want_before) status = image(plan, f.data, f.data + f.len, 3, 1, &before, &unused);
        if (status == RI_OK && want_after) status = image(plan, f.data, f.data + f.len, 4, 0, &after, &invalid);
        if (status == RI_OK) {
            PyObject *row = PyTuple_Pack(3, before ? before : Py_None, after ? after : Py_None,
                                         invalid ? invalid : Py_None);
            if (!row || PyList_Append(rows, row) < 0) status = RI_ERROR;
            Py_XDECREF(row);
        }
        Py_XDECREF(before);
        Py_XDECREF(after);
        Py_XDECREF(invalid);
    }
    PyBuffer_Release(&view);
    if (status == RI_OK) return rows;
    Py_XDECREF(rows);
    if (status == RI_ERROR) return NULL;
    Py_RETURN_NONE;
}
