"""The float16 conversions and the bfloat16 product of the C kernel as
integer functions of bit patterns, written once and rendered twice: as the
ACSL logic functions of the kernel header (what WP proves the C code
computes) and as Why3 functions on 64-bit bit-vectors (what
``why3/f16_bits.mlw`` proves to be IEEE 754's conversions and
multiplication, with SMT-LIB's floating-point theory).

The two renderings are the same function when every intermediate value of
the integer expression lies in (-2^63, 2^63): then 64-bit two's-complement
arithmetic is integer arithmetic, and ``sdiv``/``srem`` truncate toward
zero exactly as ACSL's ``/`` and ``%`` do.  ``bounds`` establishes it by
interval arithmetic over each function's stated domain (sound: every
select takes the hull of both branches) and ``render_*`` refuse a function
it does not bound.

    python native/bitspec.py            # print both renderings
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass

Interval = tuple[int, int]
LIMIT = 2**63
"""Every intermediate value must be strictly inside (-LIMIT, LIMIT)."""


@dataclass(frozen=True)
class Var:
    name: str


@dataclass(frozen=True)
class Lit:
    value: int


@dataclass(frozen=True)
class Arith:
    """``left op right`` with op one of + - * / % (``/``, ``%``: C's, truncating)."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Cmp:
    """``left op right`` with op one of < <= > >= == !=."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Select:
    cond: Cmp
    then: Expr
    other: Expr


@dataclass(frozen=True)
class Let:
    name: str
    value: Expr
    body: Expr


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple[Expr, ...]


Expr = Var | Lit | Arith | Cmp | Select | Let | Call


@dataclass(frozen=True)
class Function:
    """``name(params) = body`` on integers; ``domain``: each parameter's
    closed interval, over which the renderings are the same function."""

    name: str
    params: tuple[str, ...]
    domain: tuple[Interval, ...]
    body: Expr


# ---- building expressions --------------------------------------------------


def _e(x: Expr | int | str) -> Expr:
    if isinstance(x, int):
        return Lit(x)
    if isinstance(x, str):
        return Var(x)
    return x


def op(left: Expr | int | str, symbol: str, right: Expr | int | str) -> Arith:
    return Arith(symbol, _e(left), _e(right))


def cmp(left: Expr | int | str, symbol: str, right: Expr | int | str) -> Cmp:
    return Cmp(symbol, _e(left), _e(right))


def select(cond: Cmp, then: Expr | int | str, other: Expr | int | str) -> Select:
    return Select(cond, _e(then), _e(other))


def lets(bindings: list[tuple[str, Expr | int | str]], body: Expr | int | str) -> Expr:
    out = _e(body)
    for name, value in reversed(bindings):
        out = Let(name, _e(value), out)
    return out


# ---- the functions -------------------------------------------------------------


def _widen() -> Function:
    """sonnx_f16_widen(h): the binary32 pattern of the float16 magnitude h,
    a subnormal normalised by four selects (shifts by 8, 4, 2, 1)."""
    steps: list[tuple[str, Expr | int | str]] = [("m0", op("h", "%", 1024))]
    for k, (bound, factor, shift) in enumerate(
        ((8, 256, 8), (128, 16, 4), (512, 4, 2), (1024, 2, 1))
    ):
        m, s, m_next, s_next = f"m{k}", f"s{k}", f"m{k + 1}", f"s{k + 1}"
        below = cmp(m, "<", bound)
        steps.append((m_next, select(below, op(m, "*", factor), m)))
        steps.append(
            (s_next, select(below, shift if k == 0 else op(s, "+", shift), 0 if k == 0 else s))
        )
    body = select(
        cmp("h", "==", 0),
        0,
        select(
            cmp(op("h", "/", 1024), "==", 0),
            op(op("m4", "*", 8192), "+", op(op(112, "-", "s4"), "*", 8388608)),
            select(
                cmp(op("h", "/", 1024), "==", 31),
                op(op("h", "*", 8192), "+", 1879048192),
                op(op("h", "*", 8192), "+", 939524096),
            ),
        ),
    )
    return Function("sonnx_f16_widen", ("h",), ((0, 32767),), lets(steps, body))


def _shr_by_selects(name: str, shift: int, j: str, x_max: int) -> Function:
    """name(x, j) = x / 2^(shift + j) for 0 <= j < 16, as four selects
    between divisions by constants (one per bit of j)."""
    steps: list[tuple[str, Expr | int | str]] = [("x1", op("x", "/", 2**shift))]
    for k, (bit, divisor) in enumerate(((8, 256), (4, 16), (2, 4))):
        prev, cur = f"x{k + 1}", f"x{k + 2}"
        steps.append(
            (cur, select(cmp(op(op(j, "/", bit), "%", 2), "==", 1), op(prev, "/", divisor), prev))
        )
    body = select(cmp(op(j, "%", 2), "==", 1), op("x4", "/", 2), "x4")
    return Function(name, ("x", j), ((0, x_max), (0, 15)), lets(steps, body))


def _shr13() -> Function:
    """sonnx_shr13(x, j) = x / 2^(13 + j) (the float16 narrowing's)."""
    return _shr_by_selects("sonnx_shr13", 13, "j", 2**25)


def _narrow() -> Function:
    """sonnx_f16_narrow(u): the float16 pattern of the binary32 magnitude u
    rounded to nearest even (a NaN quieted, its leading payload bits kept)."""
    sub = lets(
        [
            ("sig", op(op("u", "%", 8388608), "+", 8388608)),
            ("j", op(112, "-", op("u", "/", 8388608))),
            (
                "t",
                Call(
                    "sonnx_shr13",
                    (
                        op(
                            op(
                                "sig",
                                "+",
                                op(op(Call("sonnx_shr13", (Var("sig"), Var("j"))), "/", 2), "%", 2),
                            ),
                            "-",
                            1,
                        ),
                        Var("j"),
                    ),
                ),
            ),
        ],
        op(op("t", "/", 2), "+", op("t", "%", 2)),
    )
    body = select(
        cmp("u", ">", 2139095040),
        op(32256, "+", op(op("u", "/", 8192), "%", 512)),
        select(
            cmp("u", ">=", 1199570944),
            31744,
            select(
                cmp("u", ">=", 947912704),
                op(
                    op(op(op("u", "-", 939524096), "+", 4095), "+", op(op("u", "/", 8192), "%", 2)),
                    "/",
                    8192,
                ),
                select(cmp("u", ">=", 855638016), sub, 0),
            ),
        ),
    )
    return Function("sonnx_f16_narrow", ("u",), ((0, 2**31 - 1),), body)


def _bf16_normal_steps(significand: bool) -> list[tuple[str, Expr | int | str]]:
    """A subnormal bfloat16 significand m0 = h % 128 shifted left (by 4, 2,
    1) until its leading bit is bit 6 (0 stays 0): the significands m1..m3
    with ``significand``, else m1, m2 and the shifts s1..s3."""
    steps: list[tuple[str, Expr | int | str]] = [("m0", op("h", "%", 128))]
    for k, (bound, factor, shift) in enumerate(((8, 16, 4), (32, 4, 2), (64, 2, 1))):
        m, s, m_next, s_next = f"m{k}", f"s{k}", f"m{k + 1}", f"s{k + 1}"
        below = cmp(m, "<", bound)
        if significand or k < 2:
            steps.append((m_next, select(below, op(m, "*", factor), m)))
        if not significand:
            steps.append(
                (s_next, select(below, shift if k == 0 else op(s, "+", shift), 0 if k == 0 else s))
            )
    return steps


def _bf16_sig() -> Function:
    """sonnx_bf16_sig(h): the significand of the bfloat16 magnitude h scaled
    into [128, 256) (0 for 0): h = sig * 2^(exp - 141) for h finite."""
    body = select(cmp("h", ">=", 128), op("m0", "+", 128), op("m3", "*", 2))
    return Function("sonnx_bf16_sig", ("h",), ((0, 32767),), lets(_bf16_normal_steps(True), body))


def _bf16_exp() -> Function:
    """sonnx_bf16_exp(h): the exponent that goes with sonnx_bf16_sig(h),
    biased by 134 (the biased exponent plus 7; 7 - s for a subnormal)."""
    body = select(cmp("h", ">=", 128), op(op("h", "/", 128), "+", 7), op(7, "-", "s3"))
    return Function("sonnx_bf16_exp", ("h",), ((0, 32767),), lets(_bf16_normal_steps(False), body))


def _shr7() -> Function:
    """sonnx_shr7(x, s) = x / 2^(7 + s) (the bfloat16 product's rounding)."""
    return _shr_by_selects("sonnx_shr7", 7, "s", 65535)


def _bf16_mul() -> Function:
    """sonnx_bf16_mul_bits(a, b): the bfloat16 pattern of the product of
    the bfloat16 patterns a and b, computed exactly and rounded once to
    nearest even.  Only the smaller magnitude lo can be subnormal in a
    product that does not underflow (two subnormals multiply below 2^-252),
    so only its significand is normalised; the larger hi's is read as a
    normal one's.  The 16-bit product q of the significands, its exponent
    t, and one multiplier w = 2^(8 - s) (0 for s = 9) that moves q's kept
    bits to the high half of q * w and the dropped ones to its low half:
    s = 0 for a normal result, up to 9 below; rounding to nearest even adds
    one when the low half is above half the quantum, or at it with the kept
    bits odd.  Then zeros, infinities and the NaN rule (every NaN is
    0x7FC0)."""
    finite = lets(
        [
            (
                "p",
                op(Call("sonnx_bf16_sig", (Var("lo"),)), "*", op(op("hi", "%", 128), "+", 128)),
            ),
            (
                "t0",
                op(op(Call("sonnx_bf16_exp", (Var("lo"),)), "+", op("hi", "/", 128)), "+", 7),
            ),
            ("q", select(cmp("p", ">=", 32768), "p", op("p", "*", 2))),
            ("t", select(cmp("p", ">=", 32768), op("t0", "+", 1), "t0")),
            ("s", select(cmp("t", "<", 134), 9, select(cmp("t", "<", 142), op(142, "-", "t"), 0))),
            ("w", Call("sonnx_shr7", (Lit(32768), Var("s")))),
            ("keep", op(op("q", "*", "w"), "/", 65536)),
            ("rest", op(op("q", "*", "w"), "%", 65536)),
            (
                "u",
                select(
                    cmp("rest", ">", op(32768, "-", op("keep", "%", 2))), op("keep", "+", 1), "keep"
                ),
            ),
            ("r0", select(cmp("t", ">=", 142), op(op(op("t", "-", 142), "*", 128), "+", "u"), "u")),
        ],
        select(cmp("r0", ">", 32640), 32640, "r0"),
    )
    nan = 32704
    body = lets(
        [
            ("ha", op("a", "%", 32768)),
            ("hb", op("b", "%", 32768)),
            ("lo", select(cmp("hb", "<", "ha"), "hb", "ha")),
            ("hi", select(cmp("hb", "<", "ha"), "ha", "hb")),
            ("sgn", op(op(op(op("a", "/", 32768), "+", op("b", "/", 32768)), "%", 2), "*", 32768)),
        ],
        select(
            cmp("hi", ">", 32640),
            nan,
            select(
                cmp("hi", "==", 32640),
                select(cmp("lo", "==", 0), nan, op(32640, "+", "sgn")),
                select(cmp("lo", "==", 0), "sgn", op(finite, "+", "sgn")),
            ),
        ),
    )
    return Function("sonnx_bf16_mul_bits", ("a", "b"), ((0, 65535), (0, 65535)), body)


def _bf16_narrow() -> Function:
    """sonnx_bf16_narrow(u): the bfloat16 pattern of the binary32 pattern u
    (sign included) rounded to nearest even at bit 16, a NaN quieted (bit 6
    set, its sign and leading payload bits kept).  Both formats have 8
    exponent bits, so adding the rounding increment to the pattern carries
    into the exponent (up to infinity) exactly as rounding the value does;
    a number's magnitude stays below 2^31 after it, so the sign is kept."""
    hi = op("u", "/", 65536)
    body = select(
        cmp(op("u", "%", 2147483648), ">", 2139095040),
        select(cmp(op(hi, "%", 128), ">=", 64), hi, op(hi, "+", 64)),
        op(op(op("u", "+", 32767), "+", op(hi, "%", 2)), "/", 65536),
    )
    return Function("sonnx_bf16_narrow", ("u",), ((0, 2**32 - 1),), body)


F16_CONVERSIONS: tuple[Function, ...] = (_widen(), _shr13(), _narrow())
"""The float16 conversions (the header's float16 value)."""
BF16_NARROWING: tuple[Function, ...] = (_bf16_narrow(),)
"""The bfloat16 narrowing (the exported sonnx_mul_f32_to_bf16_bits)."""
BF16_PRODUCT: tuple[Function, ...] = (_bf16_sig(), _bf16_exp(), _shr7(), _bf16_mul())
"""The bfloat16 product and its helpers."""
FUNCTIONS: tuple[Function, ...] = F16_CONVERSIONS + BF16_NARROWING + BF16_PRODUCT
"""In dependency order (a function calls only earlier ones)."""

# ---- bounds --------------------------------------------------------------------


def _hull(a: Interval, b: Interval) -> Interval:
    return (min(a[0], b[0]), max(a[1], b[1]))


def _arith(symbol: str, a: Interval, b: Interval) -> Interval:
    if symbol == "+":
        return (a[0] + b[0], a[1] + b[1])
    if symbol == "-":
        return (a[0] - b[1], a[1] - b[0])
    if symbol == "*":
        corners = [x * y for x in a for y in b]
        return (min(corners), max(corners))
    # / and % by a positive constant (the only ones these functions use)
    if b[0] != b[1] or b[0] <= 0:
        raise ValueError(f"{symbol} by a non-constant or non-positive divisor {b}")
    d = b[0]
    if symbol == "/":
        return (int(a[0] / d), int(a[1] / d))  # truncation is monotone
    return (max(a[0], -(d - 1)) if a[0] < 0 else 0, min(a[1], d - 1) if a[1] > 0 else 0)


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def _narrowed(env: Mapping[str, Interval], cond: Cmp) -> dict[str, Interval]:
    """``env`` where ``cond`` holds, when it compares a variable with a literal."""
    out = dict(env)
    if isinstance(cond.left, Var) and isinstance(cond.right, Lit):
        lo, hi = env[cond.left.name]
        k = cond.right.value
        new = {
            "<": (lo, min(hi, k - 1)),
            "<=": (lo, min(hi, k)),
            ">": (max(lo, k + 1), hi),
            ">=": (max(lo, k), hi),
            "==": (max(lo, k), min(hi, k)),
            "!=": (lo, hi),
        }[cond.op]
        if new[0] <= new[1]:  # an empty branch keeps the hull: still sound
            out[cond.left.name] = new
    return out


def _refine(
    cond: Cmp, env: Mapping[str, Interval]
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    """The environments of a select's two branches."""
    return _narrowed(env, cond), _narrowed(env, Cmp(_NEGATED[cond.op], cond.left, cond.right))


def _bound(expr: Expr, env: Mapping[str, Interval], seen: list[Interval]) -> Interval:
    """The interval of ``expr`` given ``env``; every subexpression's is appended to ``seen``."""
    if isinstance(expr, Lit):
        out = (expr.value, expr.value)
    elif isinstance(expr, Var):
        out = env[expr.name]
    elif isinstance(expr, Arith):
        out = _arith(expr.op, _bound(expr.left, env, seen), _bound(expr.right, env, seen))
    elif isinstance(expr, Select):
        _bound(expr.cond.left, env, seen)
        _bound(expr.cond.right, env, seen)
        then_env, other_env = _refine(expr.cond, env)
        out = _hull(_bound(expr.then, then_env, seen), _bound(expr.other, other_env, seen))
    elif isinstance(expr, Let):
        inner = dict(env, **{expr.name: _bound(expr.value, env, seen)})
        out = _bound(expr.body, inner, seen)
    elif isinstance(expr, Cmp):
        _bound(expr.left, env, seen)
        _bound(expr.right, env, seen)
        out = (0, 1)
    else:
        callee = _by_name(expr.function)
        args = [_bound(a, env, seen) for a in expr.args]
        for arg, (lo, hi), p in zip(args, callee.domain, callee.params, strict=True):
            if not lo <= arg[0] <= arg[1] <= hi:
                raise ValueError(
                    f"{callee.name}: argument {p} in {arg}, outside its domain {(lo, hi)}"
                )
        out = _bound(callee.body, dict(zip(callee.params, args, strict=True)), seen)
    seen.append(out)
    return out


def _by_name(name: str) -> Function:
    return next(f for f in FUNCTIONS if f.name == name)


def bounds(function: Function) -> Interval:
    """The interval of ``function``'s result over its domain; ValueError when
    an intermediate value may leave (-2^63, 2^63)."""
    seen: list[Interval] = []
    out = _bound(function.body, dict(zip(function.params, function.domain, strict=True)), seen)
    worst = max(max(abs(lo), abs(hi)) for lo, hi in seen)
    if worst >= LIMIT:
        raise ValueError(f"{function.name}: an intermediate value reaches {worst}, beyond 2^63")
    return out


# ---- evaluation ------------------------------------------------------------------


def _truncating(symbol: str, a: int, b: int) -> int:
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return quotient if symbol == "/" else a - b * quotient


def _eval(expr: Expr, env: Mapping[str, int]) -> int:
    if isinstance(expr, Lit):
        return expr.value
    if isinstance(expr, Var):
        return env[expr.name]
    if isinstance(expr, Arith):
        a, b = _eval(expr.left, env), _eval(expr.right, env)
        if expr.op in "/%":
            return _truncating(expr.op, a, b)
        return a + b if expr.op == "+" else a - b if expr.op == "-" else a * b
    if isinstance(expr, Select):
        return _eval(expr.then if _holds(expr.cond, env) else expr.other, env)
    if isinstance(expr, Let):
        return _eval(expr.body, dict(env, **{expr.name: _eval(expr.value, env)}))
    if isinstance(expr, Cmp):
        return int(_holds(expr, env))
    callee = _by_name(expr.function)
    args = [_eval(a, env) for a in expr.args]
    return _eval(callee.body, dict(zip(callee.params, args, strict=True)))


def _holds(cond: Cmp, env: Mapping[str, int]) -> bool:
    a, b = _eval(cond.left, env), _eval(cond.right, env)
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[cond.op]


def evaluate(function: Function, *args: int) -> int:
    """``function`` at ``args`` in ACSL's integer semantics (for tests)."""
    return _eval(function.body, dict(zip(function.params, args, strict=True)))


# ---- renderings ------------------------------------------------------------------


_PRECEDENCE = {"*": 3, "/": 3, "%": 3, "+": 2, "-": 2}
_INDENT = "\n      "


def _precedence(expr: Expr) -> int:
    if isinstance(expr, Arith):
        return _PRECEDENCE[expr.op]
    if isinstance(expr, Cmp):
        return 1
    if isinstance(expr, Select):
        return 0
    if isinstance(expr, Let):
        return -1
    return 4


def _acsl_at(expr: Expr, least: int) -> str:
    """``expr`` in parentheses when it binds looser than ``least``."""
    text = _acsl(expr)
    return f"({text})" if _precedence(expr) < least else text


def _acsl(expr: Expr) -> str:
    """C's precedence (left-associative arithmetic, ``?:`` to the right);
    a ``\\let`` runs to the end of the expression, so it is parenthesised
    everywhere but at the top of a body."""
    if isinstance(expr, Lit):
        return str(expr.value)
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Arith):
        p = _PRECEDENCE[expr.op]
        # (j / 8) % 2 rather than j / 8 % 2: the same order, easier to read
        mixed = isinstance(expr.left, Arith) and expr.left.op != expr.op and p == 3
        return (
            f"{_acsl_at(expr.left, p + 1 if mixed else p)} {expr.op} {_acsl_at(expr.right, p + 1)}"
        )
    if isinstance(expr, Cmp):
        return f"{_acsl_at(expr.left, 2)} {expr.op} {_acsl_at(expr.right, 2)}"
    if isinstance(expr, Select):
        if isinstance(expr.other, Select):  # a chain: one case a line
            return (
                f"{_acsl_at(expr.cond, 1)} ? {_acsl_at(expr.then, 0)} :{_INDENT}{_acsl(expr.other)}"
            )
        return f"{_acsl_at(expr.cond, 1)} ? {_acsl_at(expr.then, 0)} : {_acsl_at(expr.other, 0)}"
    if isinstance(expr, Let):
        return f"\\let {expr.name} = {_acsl_at(expr.value, 0)};{_INDENT}{_acsl(expr.body)}"
    return f"{expr.function}({', '.join(_acsl_at(a, 0) for a in expr.args)})"


def render_acsl(function: Function) -> str:
    """The ACSL logic function (for the kernel header)."""
    bounds(function)
    params = ", ".join(f"integer {p}" for p in function.params)
    return f"logic integer {function.name}({params}) ={_INDENT}{_acsl(function.body)};"


_WHY3_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "sdiv", "%": "srem"}
_WHY3_CMP = {"<": "slt", "<=": "sle", ">": "sgt", ">=": "sge"}


def _why3(expr: Expr) -> str:
    if isinstance(expr, Lit):
        return f"({expr.value}:BV64.t)"
    if isinstance(expr, Var):
        return expr.name
    if isinstance(expr, Arith):
        return f"(BV64.{_WHY3_ARITH[expr.op]} {_why3(expr.left)} {_why3(expr.right)})"
    if isinstance(expr, Cmp):
        if expr.op == "==":
            return f"({_why3(expr.left)} = {_why3(expr.right)})"
        if expr.op == "!=":
            return f"({_why3(expr.left)} <> {_why3(expr.right)})"
        return f"(BV64.{_WHY3_CMP[expr.op]} {_why3(expr.left)} {_why3(expr.right)})"
    if isinstance(expr, Select):
        return f"(if {_why3(expr.cond)} then {_why3(expr.then)} else {_why3(expr.other)})"
    if isinstance(expr, Let):
        return f"(let {expr.name} = {_why3(expr.value)} in\n    {_why3(expr.body)})"
    return f"({expr.function} {' '.join(_why3(a) for a in expr.args)})"


def render_why3(function: Function) -> str:
    """The Why3 function on BV64.t (two's complement; the same function over
    the domain, by ``bounds``)."""
    bounds(function)
    params = " ".join(function.params)
    return f"  function {function.name} ({params} : BV64.t) : BV64.t =\n    {_why3(function.body)}"


def main() -> int:
    for function in FUNCTIONS:
        print(render_acsl(function), "\n", render_why3(function), "\n", bounds(function), sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
