"""A root service's replicas must reach the Python they run without reaching the service's home."""

import os
import shutil
from pathlib import Path

import pytest

from infra.backends.local_runtime import default_work_dir, mirror, passable

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="only a root service's replicas change user")


@pytest.fixture
def prefix(tmp_path: Path) -> Path:
    """A virtual environment's shape: a script naming its interpreter, links, packages."""
    venv = tmp_path / "private" / "venv"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (site / "torch.py").write_text("ONES = 1\n")
    (venv / "bin").mkdir()
    (venv / "bin" / "python").symlink_to("/usr/bin/python3")
    (venv / "bin" / "python3").symlink_to("python")
    (venv / "bin" / "here").symlink_to(venv / "bin" / "python")
    (venv / "lib64").symlink_to("lib")
    script = venv / "bin" / "torchrun"
    script.write_text(f"#!{venv}/bin/python\nimport torch\n")
    script.chmod(0o755)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return venv


def test_the_mirror_links_the_files_and_points_scripts_and_links_at_itself(
    prefix: Path, replica_work_dir: Path
) -> None:
    made = mirror([prefix], replica_work_dir / ".runtime")[prefix]
    site = Path("lib/python3.11/site-packages/torch.py")
    assert (made / site).stat().st_ino == (prefix / site).stat().st_ino  # a link, not a copy
    assert (made / "bin/torchrun").read_text() == f"#!{made}/bin/python\nimport torch\n"
    assert (made / "bin/torchrun").stat().st_mode & 0o777 == 0o755
    assert os.readlink(made / "bin/python") == "/usr/bin/python3"
    assert os.readlink(made / "bin/python3") == "python"
    assert os.readlink(made / "bin/here") == str(made / "bin/python")
    assert os.readlink(made / "lib64") == "lib"
    assert oct((replica_work_dir / ".runtime").stat().st_mode & 0o777) == oct(0o711)


def test_the_mirror_is_built_once_per_state_of_the_packages(
    prefix: Path, replica_work_dir: Path
) -> None:
    into = replica_work_dir / ".runtime"
    first = mirror([prefix], into)[prefix].parent
    assert mirror([prefix], into)[prefix].parent == first
    site = prefix / "lib" / "python3.11" / "site-packages"
    (site / "numpy.py").write_text("")
    os.utime(site, ns=(1, site.stat().st_mtime_ns + 1_000_000))
    second = mirror([prefix], into)[prefix].parent
    assert second != first
    assert (second / "0" / "lib/python3.11/site-packages/numpy.py").exists()
    assert sorted(p.name for p in into.iterdir()) == sorted([first.name, second.name])


def test_a_venv_and_the_python_it_was_made_from_are_mirrored_together(
    tmp_path: Path, replica_work_dir: Path
) -> None:
    base = tmp_path / "pyenv" / "3.11"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "python3.11").write_bytes(b"\x7fELF")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(base / "bin" / "python3.11")
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\nversion = 3.11.7\n")
    made = mirror([venv, base], replica_work_dir / ".runtime")
    assert os.readlink(made[venv] / "bin" / "python") == str(made[base] / "bin" / "python3.11")
    config = (made[venv] / "pyvenv.cfg").read_text()
    assert config == f"home = {made[base]}/bin\nversion = 3.11.7\n"


def test_a_folder_others_cannot_pass_hides_everything_below_it(replica_work_dir: Path) -> None:
    below = replica_work_dir / "home" / "venv"
    below.mkdir(parents=True)
    for folder in (replica_work_dir / "home", below):
        folder.chmod(0o711)
    assert passable(below)
    (replica_work_dir / "home").chmod(0o700)
    assert not passable(below)
    assert not passable(replica_work_dir / "missing")


@AS_ROOT
def test_a_root_service_with_a_private_data_dir_keeps_its_workloads_where_replicas_reach(
    replica_work_dir: Path,
) -> None:
    data = replica_work_dir / "private" / ".trainplate"
    data.mkdir(parents=True, mode=0o711)
    (replica_work_dir / "private").chmod(0o700)
    chosen = default_work_dir(data)
    assert chosen.parent.parent == Path("/var/lib/trainplate")
    assert chosen == default_work_dir(data)  # the same data dir, the same folder
    (replica_work_dir / "private").chmod(0o711)
    assert default_work_dir(data) == data.resolve() / "workloads"
    chosen.mkdir(parents=True)  # runs went there: they stay there, passable or not
    try:
        assert default_work_dir(data) == chosen
    finally:
        shutil.rmtree(chosen.parent)
