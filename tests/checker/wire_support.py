"""What several of the wire pre-pass's tests (``test_wire_*.py``) compare: protobuf's
reading of bytes, the pre-pass against sanitize on them, the checker's report (or
its read error) with the walker made to refuse, and onnx.checker's verdict."""

from __future__ import annotations

import onnx
import pytest

from sonnx_mul.models import ModelReadError, check_report, sanitize, wire


def parsed(data: bytes | bytearray) -> onnx.ModelProto | None:
    """The model protobuf reads from ``data``; None when protobuf refuses it."""
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception:  # protobuf's DecodeError: what the checker reports as a read error
        return None
    return m


def stripped(m: onnx.ModelProto, prepassed: bool) -> bytes:
    """``m`` after sanitize.strip_payloads, serialized deterministically."""
    sanitize.strip_payloads(m, prepassed=prepassed)
    return m.SerializeToString(deterministic=True)


def compare(data: bytes, limit: int) -> str:
    """What the pre-pass did with ``data``; fails if parsing or sanitizing its output
    differs from the original's."""
    try:
        out = wire.strip_lists(data, limit)
    except wire.WireError:
        return "refused"  # the checker then parses the original bytes: today's path
    except wire.UnverifiableError:
        return "unverifiable"  # the checker refuses the file (a read error, exit 2)
    before, after = parsed(data), parsed(out)
    assert (before is None) == (after is None), (data, out)
    if before is None or after is None:
        return "protobuf refuses both"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sanitize, "PAYLOAD_LIMIT", limit)
        assert stripped(before, False) == stripped(after, True), (data, out)
    return "unchanged" if out is data else "rewritten"


def report_or_error(data: bytes) -> object:
    """check_report's report of ``data``, or ("ModelReadError", its message)."""
    try:
        return check_report(data)
    except ModelReadError as exc:
        return ("ModelReadError", str(exc))


def refusing_walker(data: bytes | bytearray, limit: int) -> bytes:
    """A stand-in for the checker's strip_lists that always refuses: the checker then
    parses the file as it is (its path without the pre-pass)."""
    raise wire.WireError("planted: the walker refuses")


def onnx_checker_accepts(m: onnx.ModelProto) -> bool:
    """Whether onnx.checker.check_model accepts ``m``."""
    try:
        onnx.checker.check_model(m)
    except onnx.checker.ValidationError:
        return False
    return True
