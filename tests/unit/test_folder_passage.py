"""As root, the embedded PostgreSQL's user passes the folders above its files; no one else does."""

import os
import subprocess
from pathlib import Path

import pytest

from infra.cli.folder_passage import grant_passage

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="only root runs a server as another user")
DATABASE, WORKLOAD = 60_001, 60_002


def reaches(uid: int, path: Path) -> bool:
    probe = subprocess.run(["cat", str(path)], user=uid, group=uid, capture_output=True)
    return probe.returncode == 0


def test_only_the_named_user_may_pass_and_no_one_may_list(replica_work_dir: Path) -> None:
    home = replica_work_dir / "root"
    data = home / "checkout" / "data"
    data.mkdir(parents=True)
    (data / "PG_VERSION").write_text("16\n")
    (data / "PG_VERSION").chmod(0o644)
    home.chmod(0o700)
    (home / "checkout").chmod(0o750)
    assert not reaches(DATABASE, data / "PG_VERSION")

    grant_passage(data / "PG_VERSION", DATABASE, DATABASE)

    assert reaches(DATABASE, data / "PG_VERSION")
    assert not reaches(WORKLOAD, data / "PG_VERSION")
    assert (home.stat().st_mode & 0o007, (home / "checkout").stat().st_mode & 0o007) == (0, 0)
    listing = subprocess.run(["ls", str(home)], user=DATABASE, group=DATABASE, capture_output=True)
    assert listing.returncode != 0  # passing is all it may do
    grant_passage(data / "PG_VERSION", DATABASE, DATABASE)  # again: nothing more
    assert reaches(DATABASE, data / "PG_VERSION")
    home.chmod(0o700)  # masks the entry out
    assert not reaches(DATABASE, data / "PG_VERSION")
    grant_passage(data / "PG_VERSION", DATABASE, DATABASE)
    assert reaches(DATABASE, data / "PG_VERSION")
    assert not reaches(WORKLOAD, data / "PG_VERSION")
