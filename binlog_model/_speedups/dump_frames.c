/* The replication dump's packets -> the binlog events they carry, for a tail's read buffer.
 *
 * Why: a dump sends one packet per event (4-byte header: 3-byte length, sequence number; payload: 0x00
 * then the event). Stripping ~55,000 packet headers per 400 MB in Python, with the checks that tell file
 * content from the server's framing events, cost about as much user time as receiving the bytes.
 *
 * The reference is binlog_model.io.replication.take_events (pure Python): this code takes exactly the
 * packets it takes and returns the same tuple. It stops, leaving the rest to the Python reader, at the
 * first packet that is incomplete, a 16 MiB continuation, out of sequence, not an OK (0x00) packet, too
 * short for an event header, whose event_size is not its length, or that is framing (artificial flag,
 * FORMAT_DESCRIPTION, heartbeat, ROTATE / GTID_LIST at log_pos 0), that starts before 0, or that does not
 * follow the previous one. Every read is inside buf[pos:end], checked before it is made.
 */
#include "dump_frames.h"

#include <stdint.h>
#include <string.h>

enum {
    EV_ROTATE = 4, EV_FORMAT_DESCRIPTION = 15, EV_HEARTBEAT = 27, EV_HEARTBEAT_V2 = 41, EV_GTID_LIST = 163,
    HEADER = 19, ARTIFICIAL = 0x20, MAX_PACKET = 0xFFFFFF
};

static inline uint32_t u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

PyObject *bm_py_dump_events(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, end;
    int seq;
    long long next_offset;
    if (!PyArg_ParseTuple(args, "y*nniL", &view, &pos, &end, &seq, &next_offset)) return NULL;
    if (pos < 0 || end < pos || end > view.len || seq < 0 || seq > 255) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "dump_events: need 0 <= pos <= end <= len(buf), 0 <= seq <= 255");
        return NULL;
    }
    const unsigned char *b = view.buf;
    Py_ssize_t p = pos, total = 0, last = 0, count = 0;
    long long first_offset = 0, run_end = 0;
    int first_type = 0;
    uint32_t last_log_pos = 0, last_flags = 0;
    while (end - p >= 4) {
        Py_ssize_t length = (Py_ssize_t)b[p] | (Py_ssize_t)b[p + 1] << 8 | (Py_ssize_t)b[p + 2] << 16;
        if (length >= MAX_PACKET || end - p - 4 < length || b[p + 3] != seq) break;
        if (length < 1 + HEADER || b[p + 4] != 0) break;
        const unsigned char *ev = b + p + 5;             /* length - 1 >= HEADER bytes from here */
        Py_ssize_t size = length - 1;
        int type = ev[4];
        uint32_t log_pos = u32(ev + 13);
        uint32_t flags = (uint32_t)ev[17] | (uint32_t)ev[18] << 8;
        if (u32(ev + 9) != (uint32_t)size || (flags & ARTIFICIAL) || type == EV_FORMAT_DESCRIPTION
            || type == EV_HEARTBEAT || type == EV_HEARTBEAT_V2
            || (log_pos == 0 && (type == EV_ROTATE || type == EV_GTID_LIST))) break;
        long long offset = log_pos ? (long long)log_pos - size : next_offset;
        if (offset < 0 || (count && offset != run_end)) break;
        if (!count) {
            first_offset = offset;
            first_type = type;
        }
        last = total;
        total += size;
        run_end = offset + size;
        last_log_pos = log_pos;
        last_flags = flags;
        next_offset = log_pos ? (long long)log_pos : run_end;
        seq = (seq + 1) & 0xFF;
        p += 4 + length;
        count++;
    }
    if (!count) {
        PyBuffer_Release(&view);
        Py_RETURN_NONE;
    }
    PyObject *data = PyBytes_FromStringAndSize(NULL, total);
    if (!data) {
        PyBuffer_Release(&view);
        return NULL;
    }
    unsigned char *out = (unsigned char *)PyBytes_AS_STRING(data);
    Py_ssize_t q = pos, o = 0;
    for (Py_ssize_t i = 0; i < count; i++) {      /* the packets checked above, again */
        Py_ssize_t length = (Py_ssize_t)b[q] | (Py_ssize_t)b[q + 1] << 8 | (Py_ssize_t)b[q + 2] << 16;
        memcpy(out + o, b + q + 5, (size_t)(length - 1));
        o += length - 1;
        q += 4 + length;
    }
    PyBuffer_Release(&view);
    return Py_BuildValue("(NniLinIIL)", data, p, seq, first_offset, first_type, last,
                         (unsigned int)last_log_pos, (unsigned int)last_flags, next_offset);
}
