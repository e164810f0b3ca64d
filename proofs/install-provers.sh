#!/bin/sh
# Install Why3 and the provers the proofs use (Debian/Ubuntu packages):
# why3 (1.5.1 on bookworm), z3, cvc4, cvc5, gappa (1.4.1); and for the native
# kernel Frama-C (frama-c-base, Frama-C 25 with WP, which drives the same
# Why3 and provers) and cppcheck (its misra addon).  The PyPI z3
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
if [ -z "$missing" ]; then
    echo "why3, z3, cvc4, cvc5, gappa, frama-c and cppcheck are installed"
    exit 0
fi
cmd="apt-get update && apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
    echo "missing:$missing; run as root: $cmd" >&2
    exit 1
fi
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing
