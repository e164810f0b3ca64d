# The pure-Python reference kernel for the integer semantics of Mul.
#
# It works on flat lists of Python ints (the tensor's values in C order) and
# is the executable mirror of the Why3 refinement. It is written in the
# subset of Python that Why3's Python frontend accepts, so that the file
# CPython imports is the file Why3 proves: no docstrings, no imports, no
# decorators; contracts are the "#@" comments.


def wrap(x: int, bits: int, signed: bool) -> int:
    # x reduced modulo 2**bits into the range of the integer type.
    m: int = 2**bits
    if signed:
        h: int = 2 ** (bits - 1)
        return (x + h) % m - h
    return x % m


def mul_exact(a: list[int], b: list[int]) -> list[int]:
    c = []
    i = 0
    while i < len(a):
        c.append(a[i] * b[i])
        i = i + 1
    return c


def mul_wrap(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    c = []
    i = 0
    while i < len(a):
        c.append(wrap(a[i] * b[i], bits, signed))
        i = i + 1
    return c


def first_overflow(a: list[int], b: list[int], lo: int, hi: int) -> int:
    # The first index whose exact product is outside [lo, hi], or -1.
    i = 0
    while i < len(a):
        p = a[i] * b[i]
        if p < lo or p > hi:
            return i
        i = i + 1
    return -1
