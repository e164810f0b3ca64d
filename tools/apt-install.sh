#!/bin/sh
# Install the Debian packages named as arguments (the callers list only what
# is missing): apt-get as root; otherwise print the command and fail.  Shared
# by proofs/install-provers.sh, tools/install-toolchains.sh and
# tools/debian-python-prereqs.sh.
set -eu
[ "$#" -gt 0 ] || exit 0
cmd="apt-get update && apt-get install -y --no-install-recommends $*"
if [ "$(id -u)" -ne 0 ]; then
    echo "missing: $*; run as root: $cmd" >&2
    exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
