"""CrossHair driver: checks the PEP 316 contracts of ``sonnx_mul_assurance.python.contracts``.

``python -m sonnx_mul_assurance.python.crosshair check`` runs ``crosshair check
--analysis_kind=PEP316`` once per contract function (two at a time), parses
its findings (``file:line: error: ... when calling f(args)``), re-runs every
counterexample as plain Python to confirm it, and writes
``proofs/out/crosshair.json``. Exit 0: no confirmed counterexample; 1: a
confirmed counterexample, or CrossHair failed (its exit 2, a crash, a
finding that cannot be parsed); a counterexample that does not reproduce in
plain Python is recorded as "unconfirmed" (CrossHair's symbolic sequence
``==`` gives such false alarms) and does not fail the run.

@relation(F, F-WRAP, F-CHECKED, R1, R4, R3-OPSET, C1-OUT, scope=file)
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

from sonnx_mul_assurance.evidence import binding, files, schema

CONTRACTS = "sonnx_mul_assurance.python.contracts"
"""The module whose contract functions the check runs."""
DEFAULT_TIMEOUT = 8.0
FINDING = re.compile(
    r"^(?P<file>.*?):(?P<line>\d+): error: (?P<message>.*) when calling (?P<call>.*)$"
)
RETURNS = re.compile(r"^(?P<call>.*) \(which returns .*\)$", re.DOTALL)


Finding = schema.CrossHairFinding
FunctionResult = schema.CrossHairFunction


def crosshair_executable() -> str:
    """The ``crosshair`` next to this interpreter (the venv's), else the one on PATH."""
    local = Path(sys.executable).with_name("crosshair")
    return str(local) if local.exists() else "crosshair"


def checked_code() -> list[Path]:
    """The files the contracts run: the contracts module and every module of
    the product and the tooling it imports, transitively (the native
    extension included)."""
    return binding.import_closure([CONTRACTS], ["sonnx_mul", "sonnx_mul_assurance"])


def inputs() -> list[Path]:
    """Every file a check's verdict depends on: :func:`checked_code` and this
    driver's own code.  ``crosshair.json`` records their SHA-256; the gate
    compares them with the tree's (:mod:`..evidence.binding`)."""
    own = binding.own_code(__spec__, __name__)
    return sorted({*checked_code(), *own})


def crosshair_version() -> str:
    try:
        return metadata.version("crosshair-tool")
    except Exception:  # pragma: no cover - reported, never fatal here
        return "unknown"


def contract_functions(path: Path) -> dict[str, int]:
    """Functions of a module file whose docstring has ``post:`` lines, with their count."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: dict[str, int] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            doc = ast.get_docstring(node) or ""
            posts = [ln for ln in doc.splitlines() if ln.strip().startswith("post:")]
            if posts:
                found[node.name] = len(posts)
    return found


def conditions(fn: Callable[..., Any]) -> tuple[list[str], list[str]]:
    """The ``pre:`` and ``post:`` expressions of a function's docstring."""
    pre: list[str] = []
    post: list[str] = []
    for line in (inspect.getdoc(fn) or "").splitlines():
        text = line.strip()
        if text.startswith("pre:"):
            pre.append(text[4:].strip())
        elif text.startswith("post:"):
            post.append(text[5:].strip())
    return pre, post


def _capture(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
    return args, kwargs


def confirm(module: ModuleType, call: str) -> tuple[bool, str]:
    """Re-run ``f(args)`` as CrossHair printed it; True when a contract really fails.

    The call is evaluated in the module's namespace; the preconditions must
    hold (else the report is a false alarm), then the function runs and
    every postcondition is evaluated on its result. An exception raised by
    the function or by a postcondition confirms the finding.
    """
    match = RETURNS.match(call)
    call = match.group("call") if match else call
    name, _, rest = call.partition("(")
    fn = getattr(module, name.strip(), None)
    if fn is None or not rest.endswith(")"):
        return False, f"cannot parse the call {call!r}"
    namespace = dict(vars(module))
    namespace["_capture"] = _capture
    try:
        args, kwargs = eval("_capture(" + rest, namespace)
    except Exception as error:
        return False, f"cannot evaluate the arguments: {error!r}"
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    env = dict(namespace)
    env.update(bound.arguments)
    pre, post = conditions(fn)
    for expr in pre:
        if not eval(expr, env):
            return False, f"precondition does not hold: {expr}"
    try:
        result = fn(*args, **kwargs)
    except Exception as error:
        return True, f"raised {error!r}"
    env["__return__"] = result
    for expr in post:
        try:
            ok = eval(expr, env)
        except Exception as error:
            return True, f"postcondition {expr} raised {error!r} (result {result!r})"
        if not ok:
            return True, f"postcondition {expr} is false (result {result!r})"
    return False, f"every postcondition holds in plain Python (result {result!r})"


def check_function(
    module_name: str,
    function: str,
    n_conditions: int,
    timeout: float,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> FunctionResult:
    """Run CrossHair on one function and confirm what it reports."""
    command = [
        crosshair_executable(),
        "check",
        "--analysis_kind=PEP316",
        f"--per_condition_timeout={timeout}",
        f"{module_name}.{function}",
    ]
    start = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, check=False)
    elapsed = round(time.monotonic() - start, 2)
    output = (proc.stdout + proc.stderr).strip()
    result = FunctionResult(function, n_conditions, "pass", elapsed, proc.returncode, output=output)
    if proc.returncode not in (0, 1):
        result.status = "error"
        return result
    lines = [ln for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode == 1 and not lines:
        result.status = "error"
        return result
    module: ModuleType | None = None
    for line in lines:
        found = FINDING.match(line)
        if found is None:
            result.status = "error"
            continue
        if module is None:
            module = _import(module_name, env)
        confirmed, detail = confirm(module, found.group("call"))
        result.findings.append(
            Finding(
                int(found.group("line")),
                found.group("message"),
                found.group("call"),
                "confirmed" if confirmed else "unconfirmed",
                detail,
            )
        )
    if result.status != "error" and result.findings:
        confirmed_any = any(f.status == "confirmed" for f in result.findings)
        result.status = "counterexample" if confirmed_any else "unconfirmed"
    return result


def _import(module_name: str, env: dict[str, str] | None) -> ModuleType:
    if env and env.get("PYTHONPATH"):
        for entry in reversed(env["PYTHONPATH"].split(os.pathsep)):
            if entry and entry not in sys.path:
                sys.path.insert(0, entry)
    module = importlib.import_module(module_name)
    return importlib.reload(module)


def check_module(
    path: Path,
    module_name: str,
    timeout: float = DEFAULT_TIMEOUT,
    jobs: int = 2,
    only: list[str] | None = None,
    extra_path: Path | None = None,
) -> list[FunctionResult]:
    """Check every contract function of ``path`` (imported as ``module_name``)."""
    functions = contract_functions(path)
    if only:
        functions = {k: v for k, v in functions.items() if k in only}
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(extra_path), env.get("PYTHONPATH", "")) if p
        )
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [
            pool.submit(check_function, module_name, name, n, timeout, env, extra_path)
            for name, n in functions.items()
        ]
        return [f.result() for f in futures]


def verdict(results: list[FunctionResult]) -> int:
    """0 when nothing was confirmed and CrossHair ran cleanly, else 1."""
    bad = {"counterexample", "error"}
    return 1 if not results or any(r.status in bad for r in results) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sonnx_mul_assurance.python.crosshair")
    parser.add_argument("command", choices=("check",))
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="per condition, s")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--function", action="append", help="only this contract function")
    parser.add_argument("--out", type=Path, default=files.evidence_path(files.CROSSHAIR))
    args = parser.parse_args(argv)

    root = Path.cwd()
    contracts = Path(__file__).resolve().parent / "contracts.py"
    bound = binding.digest(root, inputs())
    start = time.monotonic()
    results = check_module(contracts, CONTRACTS, args.timeout, args.jobs, args.function)
    elapsed = round(time.monotonic() - start, 2)
    # the record says what was checked: files edited while CrossHair ran are not
    if binding.digest(root, inputs()) != bound:
        results.append(
            FunctionResult("(inputs)", 0, "error", 0.0, 0, output="inputs changed during the run")
        )
    code = verdict(results)
    report = schema.CrossHairEvidence(
        tool="crosshair",
        crosshair_version=crosshair_version(),
        python=sys.version.split()[0],
        analysis_kind="PEP316",
        per_condition_timeout=args.timeout,
        artifacts=binding.digest(root, checked_code()),
        functions=results,
        conditions=sum(r.conditions for r in results),
        time=elapsed,
        passed=code == 0,
        source=binding.shown(contracts, root),
        inputs=bound,
    )
    schema.dump(report, args.out)
    for r in results:
        extra = "".join(f"\n    {f.status}: {f.call} -- {f.detail}" for f in r.findings)
        print(f"{r.status:15} {r.function} ({r.conditions} conditions, {r.time} s){extra}")
        if r.status == "error":
            print("    " + r.output.replace("\n", "\n    ")[:2000])
    n_cond = report.conditions
    print(f"crosshair: {len(results)} functions, {n_cond} conditions, {elapsed} s -> exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
