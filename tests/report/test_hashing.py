"""The hashes the report records: every byte of a file counts (issue 19).

A 3 MiB file (48 hash blocks) changed by one byte at its start, its middle
or its very end must change the hash the report records for it, both in
``artifacts`` (what the claim depends on) and in ``package`` (what
``verify-install`` compares). A hash of a prefix, of a sample, or of all but
the last block would pass the unchanged case and fail here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_trace_report import FIXTURE_REGISTRY, make_tree

from sonnx_mul import digest
from sonnx_mul_assurance.report import build_report

SIZE = 3 << 20
BIG = "src/sonnx_mul/_native.so"


def content(size: int) -> bytes:
    return hashlib.shake_256(b"sonnx").digest(size)  # no repeated block: a shifted read shows


def recorded(root: Path) -> tuple[str, str]:
    report = build_report(root, registry=FIXTURE_REGISTRY, probe_tools=False)
    return report["artifacts"][BIG], report["package"]["files"]["_native.so"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_tree(tmp_path_factory.mktemp("hash"))
    (root / BIG).write_bytes(content(SIZE))
    return root


def test_the_recorded_hash_is_the_hash_of_every_byte(tree: Path) -> None:
    full = hashlib.sha256((tree / BIG).read_bytes()).hexdigest()
    assert SIZE > 40 * digest.BLOCK
    assert recorded(tree) == (full, full)


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_one_changed_byte_anywhere_changes_the_recorded_hash(tree: Path, where: str) -> None:
    path = tree / BIG
    original = path.read_bytes()
    before = recorded(tree)
    offset = {"start": 0, "middle": SIZE // 2 + 12345, "end": SIZE - 1}[where]
    changed = bytearray(original)
    changed[offset] ^= 0x01
    try:
        path.write_bytes(bytes(changed))
        after = recorded(tree)
    finally:
        path.write_bytes(original)
    expected = hashlib.sha256(bytes(changed)).hexdigest()
    assert after == (expected, expected)
    assert after[0] != before[0]


def test_a_changed_evidence_file_changes_its_recorded_hash(tree: Path) -> None:
    xml = tree / "proofs/out/pytest.xml"
    original = xml.read_bytes()
    before = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)["artifacts"]
    try:
        xml.write_bytes(original + b" ")
        after = build_report(tree, registry=FIXTURE_REGISTRY, probe_tools=False)["artifacts"]
    finally:
        xml.write_bytes(original)
    assert after["proofs/out/pytest.xml"] != before["proofs/out/pytest.xml"]
    assert after["proofs/out/pytest.xml"] == hashlib.sha256(original + b" ").hexdigest()


@pytest.mark.parametrize(
    "size", [0, 1, digest.BLOCK - 1, digest.BLOCK, digest.BLOCK + 1, 3 * digest.BLOCK + 7]
)
def test_digest_at_block_boundaries(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f"
    data = content(size) if size else b""
    path.write_bytes(data)
    assert digest.sha256(path) == hashlib.sha256(data).hexdigest()


def test_the_walk_skips_only_caches(tmp_path: Path) -> None:
    """What the package block lists: every file, native binaries included, caches excluded."""
    pkg = tmp_path / "pkg"
    (pkg / "__pycache__").mkdir(parents=True)
    (pkg / "sub").mkdir()
    for rel in ("a.py", "_native.cpython-311-x86_64-linux-gnu.so", "x.pyd", "sub/data.bin"):
        (pkg / rel).write_bytes(rel.encode())
    (pkg / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"cache")
    assert sorted(digest.package_files(pkg)) == [
        "_native.cpython-311-x86_64-linux-gnu.so",
        "a.py",
        "sub/data.bin",
        "x.pyd",
    ]
