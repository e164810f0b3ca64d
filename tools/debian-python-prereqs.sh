#!/bin/sh
# What Debian's own python3 needs for `make test-debian-python`: venv and
# ensurepip (python3-venv: Debian strips ensurepip out of the interpreter),
# Python.h (python3-dev) and gcc to build sonnx_mul._native.  Installed with
# apt-get as root; otherwise the command is printed and the target fails.
set -eu
python="${1:-/usr/bin/python3}"
if [ ! -x "$python" ]; then
    echo "$python: no such interpreter (set DEBIAN_PYTHON)" >&2
    exit 1
fi
missing=""
"$python" -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$missing python3-venv"
include=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
[ -f "$include/Python.h" ] || missing="$missing python3-dev"
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
if [ -z "$missing" ]; then
    echo "$python has venv, ensurepip and Python.h; gcc is installed"
    exit 0
fi
# shellcheck disable=SC2086
exec sh "$(dirname "$0")/apt-install.sh" $missing
