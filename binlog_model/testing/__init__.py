"""Real servers for tests and fixture generation: a throwaway local MariaDB, Docker MySQL, scenario runner.

Import the submodules directly (``binlog_model.testing.mariadb``, ``.containers``, ``.scenario``); they need
the ``fixtures`` extra (pymysql, and testcontainers/docker for containers) only when used.
"""
