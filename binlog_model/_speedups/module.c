/* binlog_model._speedups: the compiled row builder (RowPlan + rows-event row images -> protobuf Row bytes).
 * Entry points: see /work/notes/speedups-api.md (stubs until the builder lands). */
#include "buffer.h"
#include "json_text.h"

static PyObject *compile_plan(PyObject *self, PyObject *args) {
    PyErr_SetString(PyExc_NotImplementedError, "compiled plans are not built yet");
    return NULL;
}

static PyObject *build_rows(PyObject *self, PyObject *args) {
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"compile_plan", compile_plan, METH_VARARGS, "compile_plan(columns, primary_key, always) -> Plan"},
    {"build_rows", build_rows, METH_VARARGS,
     "build_rows(plan, buf, pos, end, present, present_after, operation, image_mode, first_row_index) "
     "-> (list of Row bytes, end position) or None on bad input"},
    {"json_text", bm_py_json_text, METH_O,
     "json_text(data) -> str | None: MySQL binary JSON as JSON text (None: the Python reference decides)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "binlog_model._speedups", NULL, -1, methods,
                                       NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&moduledef); }
