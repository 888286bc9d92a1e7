"""Subcommands of the ``binlog-model`` CLI, one module each (see ``binlog_model.cli``); ``options`` holds the
options several of them share."""
