"""Generated protobuf classes for ``proto/binlog_model/v1/binlog_event.proto``.

Never edit ``binlog_event_pb2.py`` / ``.pyi`` by hand: run ``scripts/gen_proto.sh`` and commit its output
(``tests/unit/test_proto_fresh.py`` regenerates into a temp dir and compares bytes). Import the messages from
``binlog_model.messages``, which re-exports them with helpers.
"""
