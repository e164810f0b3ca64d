# The pure-Python reference kernel for the integer semantics of Mul.
#
# It works on flat lists of Python ints (the tensor's values in C order) and
# is the executable mirror of the Why3 refinement. It is written in the
# subset of Python that Why3's Python frontend accepts, so that the file
# CPython imports is the file Why3 proves (`why3 prove -a split_vc` on this
# very file): no docstrings, no imports, no decorators, no `**` (the
# frontend has `pow` in logic only, so powers of two come from `pow2`);
# contracts are the "#@" comments, which CPython ignores.
# Requirement links for StrictDoc are comment markers written with a space
# after the hash, so that the frontend reads them as plain comments. The formatter is kept
# off this file: it would turn the "#@" contract prefix into "# @".
# ruff: noqa: E501
# fmt: off


# @relation(F, scope=range_start)
#@ function
def prod(x: int, y: int) -> int:
    # The scalar product, as a logic function of Why3 (`let function`),
    # proved with `-a eliminate_definition`, which states its definition
    # `prod x y = x * y` as an axiom. Every postcondition below is stated on
    # the mathematical product `a[i] * b[i]`, never on `prod`: a wrong body
    # here makes them unprovable. Loop invariants use `prod` so that the
    # provers reason on `prod` terms without non-linear arithmetic.
    return x * y
# @relation(F, scope=range_end)


# @relation(F-WRAP, scope=range_start)
def pow2(n: int) -> int:
    #@ requires n >= 0
    #@ ensures result == pow(2, n)
    p = 1
    k = 0
    while k < n:
        #@ invariant 0 <= k <= n
        #@ invariant p == pow(2, k)
        #@ variant n - k
        p = p * 2
        k = k + 1
    return p


def wrap(x: int, bits: int, signed: bool) -> int:
    # x reduced modulo 2**bits into the range of the integer type.
    #@ requires bits >= 1
    #@ ensures signed -> result == (x + pow(2, bits - 1)) % pow(2, bits) - pow(2, bits - 1)
    #@ ensures not signed -> result == x % pow(2, bits)
    #@ ensures signed -> -pow(2, bits - 1) <= result and result < pow(2, bits - 1)
    #@ ensures not signed -> 0 <= result and result < pow(2, bits)
    m = pow2(bits)
    if signed:
        h = pow2(bits - 1)
        return (x + h) % m - h
    return x % m
# @relation(F-WRAP, scope=range_end)


# @relation(F, scope=range_start)
def mul_exact(a: list[int], b: list[int]) -> list[int]:
    #@ requires len(a) == len(b)
    #@ ensures len(result) == len(a)
    #@ ensures forall i. 0 <= i < len(a) -> result[i] == a[i] * b[i]
    c = []
    i = 0
    while i < len(a):
        #@ invariant 0 <= i <= len(a)
        #@ invariant len(c) == i
        #@ invariant forall j. 0 <= j < i -> c[j] == prod(a[j], b[j])
        #@ variant len(a) - i
        c.append(prod(a[i], b[i]))
        i = i + 1
    return c
# @relation(F, scope=range_end)


# @relation(F-WRAP, scope=range_start)
def mul_wrap(a: list[int], b: list[int], bits: int, signed: bool) -> list[int]:
    #@ requires len(a) == len(b)
    #@ requires bits >= 1
    #@ ensures len(result) == len(a)
    #@ ensures forall i. 0 <= i < len(a) -> signed -> result[i] == (a[i] * b[i] + pow(2, bits - 1)) % pow(2, bits) - pow(2, bits - 1)
    #@ ensures forall i. 0 <= i < len(a) -> not signed -> result[i] == (a[i] * b[i]) % pow(2, bits)
    #@ ensures forall i. 0 <= i < len(a) -> signed -> -pow(2, bits - 1) <= result[i] and result[i] < pow(2, bits - 1)
    #@ ensures forall i. 0 <= i < len(a) -> not signed -> 0 <= result[i] and result[i] < pow(2, bits)
    c = []
    i = 0
    while i < len(a):
        #@ invariant 0 <= i <= len(a)
        #@ invariant len(c) == i
        #@ invariant forall j. 0 <= j < i -> signed -> c[j] == (prod(a[j], b[j]) + pow(2, bits - 1)) % pow(2, bits) - pow(2, bits - 1)
        #@ invariant forall j. 0 <= j < i -> not signed -> c[j] == prod(a[j], b[j]) % pow(2, bits)
        #@ invariant forall j. 0 <= j < i -> signed -> -pow(2, bits - 1) <= c[j] and c[j] < pow(2, bits - 1)
        #@ invariant forall j. 0 <= j < i -> not signed -> 0 <= c[j] and c[j] < pow(2, bits)
        #@ variant len(a) - i
        c.append(wrap(prod(a[i], b[i]), bits, signed))
        i = i + 1
    # From the invariant on `prod` terms to the postcondition on `*` terms
    # (a proved step: the provers do not rewrite under `%` on their own).
    #@ assert forall j. 0 <= j < len(a) -> (prod(a[j], b[j]) + pow(2, bits - 1)) % pow(2, bits) == (a[j] * b[j] + pow(2, bits - 1)) % pow(2, bits)
    return c
# @relation(F-WRAP, scope=range_end)


# @relation(F-CHECKED, scope=range_start)
def first_overflow(a: list[int], b: list[int], lo: int, hi: int) -> int:
    # The first index whose exact product is outside [lo, hi], or -1.
    #@ requires len(a) == len(b)
    #@ ensures -1 <= result and result < len(a)
    #@ ensures result == -1 <-> (forall i. 0 <= i < len(a) -> lo <= a[i] * b[i] and a[i] * b[i] <= hi)
    #@ ensures result >= 0 -> (a[result] * b[result] < lo or a[result] * b[result] > hi)
    #@ ensures result >= 0 -> (forall i. 0 <= i < result -> lo <= a[i] * b[i] and a[i] * b[i] <= hi)
    i = 0
    while i < len(a):
        #@ invariant 0 <= i <= len(a)
        #@ invariant forall j. 0 <= j < i -> lo <= prod(a[j], b[j]) and prod(a[j], b[j]) <= hi
        #@ variant len(a) - i
        p = prod(a[i], b[i])
        if p < lo or p > hi:
            return i
        i = i + 1
    return -1
# @relation(F-CHECKED, scope=range_end)
