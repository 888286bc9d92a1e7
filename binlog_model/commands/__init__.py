"""Subcommands of the ``binlog-model`` CLI, one module each (see ``binlog_model.cli``)."""
