"""``why3.config.render``: the rendered prover configuration is replaced whole,
so that a check reading it while another renders it (``make test``'s two
workers) never sees it truncated."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sonnx_mul_assurance.why3 import config


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "proofs").mkdir()
    (tmp_path / "proofs" / "t.conf.in").write_text('driver = "@DRIVERS@/x.drv"\n')
    return tmp_path


def test_render_replaces_the_file_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _tree(tmp_path)
    (root / "proofs" / "out").mkdir()
    conf = root / "proofs" / "out" / "t.conf"
    conf.write_text("the old configuration\n")
    seen: list[tuple[str, str, str]] = []
    real_replace = os.replace

    def replace(src: str, dst: str) -> None:
        # what a reader sees at the moment of the switch: the old file, whole
        seen.append((Path(src).read_text(), Path(dst).name, conf.read_text()))
        real_replace(src, dst)

    monkeypatch.setattr(config.os, "replace", replace)
    assert config.render(root, Path("proofs/t.conf.in"), "t.conf") == conf
    expected = f'driver = "{(root / "proofs" / "drivers").resolve()}/x.drv"\n'
    assert seen == [(expected, "t.conf", "the old configuration\n")]
    assert conf.read_text() == expected
    assert sorted(p.name for p in conf.parent.iterdir()) == ["t.conf"]


def test_a_failed_render_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _tree(tmp_path)
    (root / "proofs" / "out").mkdir()
    conf = root / "proofs" / "out" / "t.conf"
    conf.write_text("the old configuration\n")

    def replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(config.os, "replace", replace)
    with pytest.raises(OSError, match="disk full"):
        config.render(root, Path("proofs/t.conf.in"), "t.conf")
    assert conf.read_text() == "the old configuration\n"
    assert sorted(p.name for p in conf.parent.iterdir()) == ["t.conf"]
