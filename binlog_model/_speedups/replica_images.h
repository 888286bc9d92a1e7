/* A serialized BinlogEvent's row images -> the replica's values per column (replica_images.c). */
#ifndef BM_REPLICA_IMAGES_H
#define BM_REPLICA_IMAGES_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* replica_plan(tuple) -> capsule: a table layout's plan (binlog_model/replica/batch.py builds the tuple). */
PyObject *bm_py_replica_plan(PyObject *self, PyObject *arg);

/* replica_images(event, operation, plan) -> None | [(before | None, after | None, invalid | None), ...]:
 * TableBatch._image of each row's images, or None where the reference must run. */
PyObject *bm_py_replica_images(PyObject *self, PyObject *args);

#endif
