"""What a failed Spark job says: one line naming the root cause (a library error's type and message, or
the last Python exception line), the slice a task failed on, and what to do (memory settings for a JVM
out of memory or a lost executor, ``--slice-mb`` for a crashed Python worker, the JVM's own words when it did
not start), using the end of Spark's log when the CLI sends it to a file (``LOG_FILE_CONF``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from binlog_model.errors import BinlogError
from binlog_model.spark.session import SparkSetupError

__all__ = ["LOG_FILE_CONF", "SparkJobError", "describe_failure", "root_cause", "spark_errors"]


class SparkJobError(BinlogError):
    """A Spark job failed; the message is one line: the root cause (for a library error: its type, and the
    file, offset, table and statement it names; else the last exception line of the Python traceback),
    and where the full log is when there is one."""

    @classmethod
    def from_spark(cls, err: Exception, log_file: str | None = None) -> SparkJobError:
        where = f" (full Spark log: {log_file})" if log_file else ""
        return cls((root_cause(str(err)) or type(err).__name__) + where)


_PY_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(: .*)?$")


def root_cause(text: str) -> str:
    """The line that says what went wrong in a Spark error's text: a library error (``DecodeError: ...``,
    the task's own), else the exception line closing the last Python traceback in it (what a
    ``ModuleNotFoundError`` on an executor looks like), else the first line."""
    found = re.findall(r"binlog_model\.errors\.(\w+Error): (.*)", text)
    if found:
        name, message = found[-1]
        return f"{name}: {message}"
    start = text.rfind("Traceback (most recent call last):")
    if start >= 0:
        for line in text[start:].splitlines()[1:]:
            if not line.strip() or line[0].isspace() or line.startswith(("Traceback", "During handling",
                                                                          "The above exception")):
                continue
            m = _PY_EXCEPTION_LINE.match(line.strip())
            if m:
                return m.group(1).rsplit(".", 1)[-1] + (m.group(2) or "")
            break
    stripped = text.strip()
    return stripped.splitlines()[0] if stripped else ""



def spark_errors() -> tuple[type[Exception], ...]:
    """The exception types a failing Spark job raises in the driver (PySpark's and py4j's), for callers
    outside this package that must not import pyspark themselves; ``SparkSetupError`` without pyspark."""
    try:
        from py4j.protocol import Py4JError
        from pyspark.errors import PySparkException
    except ImportError as err:
        raise SparkSetupError("pyspark is not installed: pip install 'binlog-model[spark]'") from err
    return (PySparkException, Py4JError)


# The Spark setting naming the file Spark's log goes to (set by ``binlog-model resolve``), so a failure's
# message can use what only the log says (a JVM's OutOfMemoryError) and name the file.
LOG_FILE_CONF = "spark.binlogModel.logFile"
_TASK = re.compile(r"task (\d+)\.\d+ in stage \d+")
_EXIT = re.compile(r"(?:exit code|exitCode|exited with code)[ :=]*(-?\d+)", re.IGNORECASE)


_JVM_ERRORS = re.compile(r"^(?:Error occurred during initialization of VM|Error: Could not create the Java "
                         r"Virtual Machine\.|Error: A fatal exception has occurred\. Program will exit\.)$")


def _jvm_start_error(log: str) -> str:
    """What a JVM that failed to start printed (``Invalid maximum heap size: -Xmx1x``, ``Unrecognized VM
    option 'X'``, ``Too small maximum heap`` ...): the log's lines next to the JVM's generic error lines."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for i, line in enumerate(lines):
        if _JVM_ERRORS.match(line):
            own = [x for x in lines[max(0, i - 1):i + 2] if not _JVM_ERRORS.match(x)
                   and not x.startswith(("binlog-model:", "WARNING:"))]
            if own:
                return "; ".join(own)
    return "see Spark's log"


def describe_failure(error: str, log: str, slices: Sequence[str], conf: Mapping[str, str]) -> str:
    """One line for a failed job: what failed, where (the slice), and what to do. ``error``: the text of
    the exception the driver got; ``log``: the end of Spark's log; ``slices``: slice labels by task index;
    ``conf``: the Spark settings (and ``master``). Failures of the job's own code (a ``DecodeError`` ...)
    are ``root_cause``'s line."""
    text = f"{error}\n{log}"
    found = _TASK.search(error) or _TASK.search(log)
    where = ""
    if found and int(found.group(1)) < len(slices):
        where = f" while writing slice {slices[int(found.group(1))]}"
    local = conf.get("master", "").startswith("local")
    driver = conf.get("spark.driver.memory", "1g")
    executor = conf.get("spark.executor.memory", "1g")
    memory = (f"raise --driver-memory (now {driver}; in local mode the tasks run in the driver's JVM)"
              if local else f"raise --executor-memory (now {executor})")
    smaller = "or lower --slice-mb"
    oom = re.search(r"java\.lang\.OutOfMemoryError: ([^\n\r]+)", text)
    if oom:
        what = "executor" if not local else "Spark JVM"
        return f"{what} out of memory ({oom.group(1).strip()}){where}; {memory} {smaller}"
    lost = re.search(r"ExecutorLostFailure \(executor (\S+) exited[^)]*\) Reason: ([^\n\r]+)", text)
    if lost:
        reason = lost.group(2).strip().rstrip(".")
        return (f"executor {lost.group(1)} lost{where} ({reason}); its log is on its worker; {memory} "
                f"{smaller}, or check the machine")
    if "JAVA_GATEWAY_EXITED" in error or "Java gateway process exited" in error:
        return (f"the Spark JVM did not start ({_jvm_start_error(log)}); check --driver-memory (now "
                f"{driver}), the spark.driver.* settings given with --conf, and JAVA_HOME")
    cause = root_cause(error)
    if "MemoryError" in cause.split(":", 1)[0]:
        return (f"a Python worker ran out of memory (MemoryError){where}; lower --slice-mb or give the "
                "Python workers more memory")
    if "Python worker exited unexpectedly" in text or "crashed" in cause.lower():
        code = _EXIT.search(text)
        how = f" (exit code {code.group(1)})" if code else ""
        hint = (" (killed: 137 and -9 are SIGKILL, often the system's out-of-memory killer)"
                if code and code.group(1) in ("137", "-9") else "")
        return (f"a Python worker crashed or was killed{how}{where}{hint}; lower --slice-mb, or see the "
                "worker's output in the log")
    if "Python worker failed to connect back" in text:
        return ("a Spark Python worker did not start within Spark's fixed 10 s" + where + " (the machine is "
                "too busy: see its load average); run again when it is less busy, or give the job fewer "
                "cores (--master local[1])")
    if re.search(r"Connection refused|Answer from Java side is empty|Error while receiving|"
                 r"Py4JNetworkError|java gateway", error):
        return ("the Spark JVM exited during the job" + where + f"; {memory} {smaller}, or see the end of "
                "Spark's log")
    return cause or "the Spark job failed"
