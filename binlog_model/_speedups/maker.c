/* A constructor of frozen, slotted dataclass instances that fills the slots directly.
 *
 * Why: a frozen dataclass's generated __init__ stores each field with object.__setattr__ (the class's own
 * __setattr__ refuses), a Python call per field: 1-4 us per instance here, and the decoder makes several per
 * rows event (its header, its images, the event, a position), about a tenth of a whole decode. This maker
 * allocates the instance and writes each value into its slot, as object.__setattr__ would, in one C call.
 *
 * Exactness: binlog_model.compiled.maker decides which classes qualify (a frozen dataclass with slots, no
 * __post_init__, every field either an __init__ argument or a default_factory) and otherwise returns the class
 * itself. Here each name must be a member descriptor of cls holding an object (T_OBJECT_EX) that is not
 * read-only, every slot of cls must be named exactly once, and cls must be a heap type whose base is object:
 * so no slot stays empty and no other __init__ or __new__ is skipped. A call with the wrong number of values
 * raises TypeError.
 */
#include "maker.h"

#include <structmember.h>

typedef struct {
    PyObject_HEAD
    PyTypeObject *cls;
    Py_ssize_t nfields, nfactories;
    Py_ssize_t *offsets;          /* nfields + nfactories slot offsets: the fields', then the factories' */
    PyObject **factories;         /* nfactories callables (owned) */
    vectorcallfunc vectorcall;
} maker;

/* The slot offset of `name` in cls, or -1 with an exception set. */
static Py_ssize_t slot_offset(PyTypeObject *cls, PyObject *name) {
    PyObject *descr = PyDict_GetItemWithError(cls->tp_dict, name);
    if (!descr) {
        if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Maker: %R is not a slot of %s", name, cls->tp_name);
        return -1;
    }
    if (Py_TYPE(descr) != &PyMemberDescr_Type) {
        PyErr_Format(PyExc_TypeError, "Maker: %R of %s is not a slot", name, cls->tp_name);
        return -1;
    }
    PyMemberDef *m = ((PyMemberDescrObject *)descr)->d_member;
    if (m->type != T_OBJECT_EX || (m->flags & READONLY) || m->offset <= 0 ||
        m->offset > cls->tp_basicsize - (Py_ssize_t)sizeof(PyObject *)) {
        PyErr_Format(PyExc_TypeError, "Maker: slot %R of %s does not hold a writable object", name, cls->tp_name);
        return -1;
    }
    return m->offset;
}

static void maker_dealloc(maker *self) {
    for (Py_ssize_t k = 0; k < self->nfactories; k++) Py_XDECREF(self->factories ? self->factories[k] : NULL);
    PyMem_Free(self->factories);
    PyMem_Free(self->offsets);
    Py_XDECREF(self->cls);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *maker_call(maker *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (n != self->nfields || (kwnames && PyTuple_GET_SIZE(kwnames))) {
        PyErr_Format(PyExc_TypeError, "%s maker takes %zd positional values (%zd given)", self->cls->tp_name,
                     self->nfields, n);
        return NULL;
    }
    PyObject *obj = self->cls->tp_alloc(self->cls, 0);     /* zeroed; GC-tracked when the type is */
    if (!obj) return NULL;
    for (Py_ssize_t k = 0; k < n; k++)
        *(PyObject **)((char *)obj + self->offsets[k]) = Py_NewRef(args[k]);
    for (Py_ssize_t k = 0; k < self->nfactories; k++) {
        PyObject *value = PyObject_CallNoArgs(self->factories[k]);
        if (!value) {
            Py_DECREF(obj);
            return NULL;
        }
        *(PyObject **)((char *)obj + self->offsets[n + k]) = value;
    }
    return obj;
}

static PyObject *maker_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    PyTypeObject *cls;
    PyObject *fields, *factories;
    if (kwds && PyDict_GET_SIZE(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Maker takes no keyword arguments");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyType_Type, &cls, &PyTuple_Type, &fields, &PyTuple_Type, &factories))
        return NULL;
    if (!(cls->tp_flags & Py_TPFLAGS_HEAPTYPE) || cls->tp_base != &PyBaseObject_Type ||
        cls->tp_new != PyBaseObject_Type.tp_new || cls->tp_dictoffset != 0) {
        PyErr_Format(PyExc_TypeError, "Maker: %s is not a slotted class based on object", cls->tp_name);
        return NULL;
    }
    PyObject *slots = PyDict_GetItemString(cls->tp_dict, "__slots__");     /* borrowed */
    Py_ssize_t nf = PyTuple_GET_SIZE(fields), nk = PyTuple_GET_SIZE(factories);
    if (!slots || !PyTuple_Check(slots) || PyTuple_GET_SIZE(slots) != nf + nk) {
        PyErr_Format(PyExc_TypeError, "Maker: the names must cover every slot of %s once", cls->tp_name);
        return NULL;
    }
    maker *self = (maker *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->cls = (PyTypeObject *)Py_NewRef((PyObject *)cls);
    self->nfields = nf;
    self->vectorcall = (vectorcallfunc)maker_call;
    self->offsets = PyMem_Calloc((size_t)(nf + nk + 1), sizeof(Py_ssize_t));
    self->factories = PyMem_Calloc((size_t)(nk + 1), sizeof(PyObject *));
    if (!self->offsets || !self->factories) {
        PyErr_NoMemory();
        goto fail;
    }
    for (Py_ssize_t k = 0; k < nf + nk; k++) {
        PyObject *name;
        if (k < nf) {
            name = PyTuple_GET_ITEM(fields, k);
        } else {
            PyObject *item = PyTuple_GET_ITEM(factories, k - nf);
            if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 || !PyCallable_Check(PyTuple_GET_ITEM(item, 1))) {
                PyErr_SetString(PyExc_TypeError, "Maker: factories are (name, callable) pairs");
                goto fail;
            }
            name = PyTuple_GET_ITEM(item, 0);
            self->factories[k - nf] = Py_NewRef(PyTuple_GET_ITEM(item, 1));
            self->nfactories++;
        }
        if (!PyUnicode_Check(name)) {
            PyErr_SetString(PyExc_TypeError, "Maker: slot names are str");
            goto fail;
        }
        int in_slots = PySequence_Contains(slots, name);
        if (in_slots < 0) goto fail;
        Py_ssize_t offset = in_slots ? slot_offset(cls, name) : -1;
        if (offset < 0) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_TypeError, "Maker: %R is not a slot of %s", name, cls->tp_name);
            goto fail;
        }
        for (Py_ssize_t j = 0; j < k; j++) {
            if (self->offsets[j] == offset) {
                PyErr_Format(PyExc_TypeError, "Maker: slot %R named twice", name);
                goto fail;
            }
        }
        self->offsets[k] = offset;
    }
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

PyTypeObject bm_MakerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "binlog_model._speedups.Maker",
    .tp_doc = "Maker(cls, fields, factories): a fast constructor of a frozen, slotted dataclass (see maker.c)",
    .tp_basicsize = sizeof(maker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(maker, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_new = maker_new,
    .tp_dealloc = (destructor)maker_dealloc,
};
