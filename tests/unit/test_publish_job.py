"""``sinks.publish.publish_job``: a resolve job's staging tree becomes ``OUT`` at once (an exchange), and a
job killed between the two renames of the fallback is finished by the next run's ``check_output`` (pure,
local files, no Spark)."""

from __future__ import annotations

from pathlib import Path

import pyarrow.fs as pafs
import pytest

from binlog_model.errors import ConfigError
from binlog_model.sinks import publish


def _tree(root: Path, table: str) -> None:
    folder = root / "db=d" / f"table={table}"
    folder.mkdir(parents=True)
    (folder / "part-00000.parquet").write_bytes(table.encode())


def test_publish_exchanges_the_trees_and_deletes_the_old_one(tmp_path: Path) -> None:
    fs, out = pafs.LocalFileSystem(), str(tmp_path / "out")
    first = publish.job_staging(out, "j1")
    _tree(Path(first), "old")
    publish.publish_job(fs, first, out)
    assert (tmp_path / "out" / "db=d" / "table=old").is_dir() and not Path(first).exists()
    second = publish.job_staging(out, "j2")
    _tree(Path(second), "new")
    (Path(second) / "_attempts" / "00001-0").mkdir(parents=True)       # a failed attempt's leftovers
    publish.publish_job(fs, second, out)
    assert sorted(p.name for p in (tmp_path / "out" / "db=d").iterdir()) == ["table=new"]
    assert not (tmp_path / "out" / "_attempts").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


class _Killed(Exception):
    pass


class _DiesOnSecondMove:
    """A filesystem without an exchange (not a ``LocalFileSystem``) whose process dies after its first move:
    after ``OUT`` went aside, before the new tree went in."""

    def __init__(self) -> None:
        self.fs = pafs.LocalFileSystem()
        self.moves = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.fs, name)

    def move(self, src: str, dst: str) -> None:
        self.moves += 1
        if self.moves == 2:
            raise _Killed
        self.fs.move(src, dst)


def test_a_publish_killed_between_two_renames_is_finished_by_the_next_run(tmp_path: Path) -> None:
    out = str(tmp_path / "out")
    _tree(tmp_path / "out", "old")
    staging = publish.job_staging(out, "j3")
    _tree(Path(staging), "new")
    with pytest.raises(_Killed):
        publish.publish_job(_DiesOnSecondMove(), staging, out)
    assert not (tmp_path / "out").exists()
    publish.check_output(pafs.LocalFileSystem(), out)          # the next run, before its own work
    assert sorted(p.name for p in (tmp_path / "out" / "db=d").iterdir()) == ["table=new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_out_folder_holding_other_files_is_refused(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.txt").write_text("x")
    with pytest.raises(ConfigError, match=r"mine\.txt"):
        publish.check_output(pafs.LocalFileSystem(), str(tmp_path / "out"))
