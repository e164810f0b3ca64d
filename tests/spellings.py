"""Strings the checker makes up or writes, as a file may spell them (issue 29).

Used as declared ``dim_param``s by the fuzzers (tests/checker/test_fuzz_models.py,
test_checker_differential.py): a file spelling one names its own size, never the
checker's (SECURITY.md, "Symbols come in two namespaces").
"""

from __future__ import annotations

from hypothesis import strategies as st

from sonnx_mul.models.sanitize import STRIPPED
from sonnx_mul.models.wire import MARK


def internal_names() -> st.SearchStrategy[str]:
    """What the checker makes or shows for its own symbols, and near misses: ONNX's
    ``unk__N``, the short names of symbols.Encoding (``sN``), the renamed forms of
    issue 21 (``unk__N@R[...]``), what shapes.Made prints (``<...>``, ``?``), what
    shapes.fmt prints for a long symbol (``NNN...(N characters)``) or an unknown rank,
    the old free-dim prefix, a call's tag, and the marks sanitize and wire write."""
    n = st.integers(0, 3).map(str)
    tag = st.sampled_from(["0[]", "1[]", "2[]", "1[0, 1, 0]", "call1", "call1/1[]", "free"])
    return st.one_of(
        n.map(lambda i: f"unk__{i}"),
        n.map(lambda i: f"s{i}"),
        n.map(lambda i: f"__sonnx_free_{i}"),
        st.tuples(n, tag).map(lambda p: f"unk__{p[0]}@{p[1]}"),
        st.tuples(n, tag).map(lambda p: f"<unk__{p[0]}@{p[1]}>"),
        st.integers(65, 70000).map(lambda k: f"{'N' * 32}...({k} characters)"),
        st.sampled_from(["?", "free", "call1", "s", "unk__", "<unknown rank>", STRIPPED]),
        n.map(lambda i: f"{MARK}{i}"),
    )


def long_names(low: int = 1000, high: int = 1 << 16) -> st.SearchStrategy[str]:
    """A long symbol (kilobytes): the memory class of issue 29 as a correctness case."""
    return st.tuples(st.sampled_from("NMK"), st.integers(low, high)).map(lambda p: p[0] * p[1])
