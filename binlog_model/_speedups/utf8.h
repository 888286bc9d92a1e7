/* Strict UTF-8, as Python's strict decoder: no overlongs, no surrogates, nothing above U+10FFFF.
 *
 * One check for values.c (string values), json_text.c (JSON strings and keys), arrow_columns.c and the
 * statement texts (module.c's utf8_valid). ASCII goes eight bytes at a time, and the skip resumes after
 * each multi-byte character, so a long statement with a few accented letters costs little more than an
 * ASCII one. typed_columns.c keeps its own table-driven check, tuned for short values (see there).
 */
#ifndef BM_UTF8_H
#define BM_UTF8_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* 1 when s[0:n] is strict UTF-8, else 0. Reads only s[0:n]. */
static inline int bm_utf8_valid(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
            if (c == 0xE0 && c1 < 0xA0) return 0;       /* overlong */
            if (c == 0xED && c1 >= 0xA0) return 0;      /* a surrogate */
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
            if (c == 0xF0 && c1 < 0x90) return 0;       /* overlong */
            if (c == 0xF4 && c1 >= 0x90) return 0;      /* past U+10FFFF */
            i += 4;
        } else {
            return 0;                                   /* a continuation byte, C0/C1 or F5-FF leading */
        }
    }
    return 1;
}

#endif
