/* Whole row statements of an open transaction, from the binlog's bytes to serialized BinlogEvents
 * (statements.c; its Python side and reference is binlog_model.resolve.lane). */
#ifndef BM_STATEMENTS_H
#define BM_STATEMENTS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* statement_run(buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, tx_head,
 * tx_gtid, tx_tail, file_field, query_index, with_text, max_rows, max_bytes) -> None | False | (pos, outputs,
 * sizes, statements, rows, first_offset, last_offset, last_ts, last_type, last_server_id, last_log_pos,
 * last_flags): see statements.c (False: the buffer ends inside a statement that is for the lane so far). */
PyObject *bm_py_statement_run(PyObject *self, PyObject *args);

/* transaction_run(buf, pos, end, base, crc_len, verify, max_event_size, post_headers, tables, source_field,
 * file_field, file_seq, with_text, max_rows, max_bytes) -> None | False | (pos, outputs, transactions,
 * statements, rows, first_offset, last_offset, last_ts, last_type, last_server_id, last_flags,
 * last_log_pos, gtids): whole transactions (a GTID event, MySQL's BEGIN, statement_run's statements, the XID);
 * gtids: each one's GTID but an ANONYMOUS_GTID's, (uuid, gno) or (domain, server_id, seq). */
PyObject *bm_py_transaction_run(PyObject *self, PyObject *args);

#endif
