#!/bin/sh
# Install Why3 and the provers the proofs use (Debian/Ubuntu packages):
# why3 (1.5.1 on bookworm), z3, cvc4, cvc5, gappa (1.4.1); and for the native
# kernel Frama-C (frama-c-base, Frama-C 25 with WP, which drives the same
# Why3 and provers) and cppcheck (its misra addon); Coq 8.16 and Flocq for the
# Coq proofs of Why3 goals (proofs/build-why3-coq.sh then compiles Why3's
# Coq realizations, which Debian's why3 does not ship).  The PyPI z3
# (z3-solver in the project's virtualenv) is installed by the Python
# requirements.
set -eu
missing=""
for tool in why3 z3 cvc4 cvc5 gappa; do
    command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
done
# the native kernel's WP proof and MISRA check (package names differ from the commands)
command -v frama-c >/dev/null 2>&1 || missing="$missing frama-c-base"
command -v cppcheck >/dev/null 2>&1 || missing="$missing cppcheck"
command -v coqc >/dev/null 2>&1 || missing="$missing coq"
[ -d "$(coqc -where 2>/dev/null)/user-contrib/Flocq" ] || missing="$missing libcoq-flocq"
if [ -z "$missing" ]; then
    echo "why3, z3, cvc4, cvc5, gappa, frama-c, cppcheck, coq and flocq are installed"
    exit 0
fi
# shellcheck disable=SC2086
exec sh "$(dirname "$0")/../tools/apt-install.sh" $missing
