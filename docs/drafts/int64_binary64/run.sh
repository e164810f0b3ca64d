#!/bin/sh
# WP on the draft excess_f64.c (not part of make prove): the project's WP
# prover configuration plus two draft provers, z3-opaque and cvc5-axioms.
# Needs proofs/out/wp-why3.conf (rendered by any `make prove` or
# `python -m sonnx_mul_assurance.c.wp check`).  Usage: sh run.sh [frama-c options],
# e.g. -wp-prop=prod; SONNX_DRAFT_TIMEOUT (s, default 60) is the wall-clock limit.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
z3=$(sed -n 's/^command = "\([^ ]*z3\) .*/\1/p' "$root/proofs/out/wp-why3.conf" | head -1)
sed "s#@ROOT@#$root#" "$here/z3_opaque_wp.drv" > "$out/z3_opaque_wp.drv"
sed "s#@ROOT@#$root#" "$here/cvc5_axioms_wp.drv" > "$out/cvc5_axioms_wp.drv"
cp "$root/proofs/out/wp-why3.conf" "$out/wp-why3.conf"
cat >> "$out/wp-why3.conf" <<CONF

[prover]
command = "$z3 -smt2 -T:%t sat.random_seed=42 nlsat.randomize=false smt.random_seed=42 -st %f"
command_steps = "$z3 -smt2 -T:%t sat.random_seed=42 nlsat.randomize=false smt.random_seed=42 rlimit=%S -st %f"
driver = "$out/z3_opaque_wp.drv"
name = "Z3"
shortcut = "z3-opaque"
version = "pypi"
alternative = "opaque"

[prover]
command = "/usr/bin/cvc5 --tlimit-per=%t000 --lang=smt2 %f"
command_steps = "/usr/bin/cvc5 --tlimit-per=%t000 --rlimit-per=%S --stats-internal --lang=smt2 %f"
driver = "$out/cvc5_axioms_wp.drv"
name = "CVC5"
shortcut = "cvc5-axioms"
version = "1.0.3"
alternative = "axioms"
CONF
WHY3CONFIG="$out/wp-why3.conf" frama-c -cpp-extra-args="-I$root/native/include" \
    "$here/excess_f64.c" -wp -wp-rte -warn-special-float none \
    -wp-prover z3,cvc4-axioms,cvc5-opaque,z3-opaque,cvc5-axioms -wp-timeout "${SONNX_DRAFT_TIMEOUT:-60}" \
    -wp-par 2 -wp-no-cache-env -wp-cache none "$@"
