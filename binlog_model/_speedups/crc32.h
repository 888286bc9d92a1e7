/* CRC-32 (the zlib / binlog checksum) folded with carry-less multiplication (crc32.c). */
#ifndef BM_CRC32_H
#define BM_CRC32_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* 1 when this CPU runs the folded CRC-32 (x86-64 with PCLMULQDQ), else 0 (then use zlib.crc32). */
int bm_crc32_accelerated(void);

/* The CRC-32 of p[0:n] (zlib.crc32(data)), folded where bm_crc32_accelerated(). */
uint32_t bm_crc32(const unsigned char *p, size_t n);

/* crc32(data, value=0) -> int: zlib.crc32's result, computed faster where bm_crc32_accelerated(). */
PyObject *bm_py_crc32(PyObject *self, PyObject *args);

#endif
