#!/bin/sh
# The compilers and emulators of the kernel's targets (native/flags.mk,
# make check-targets): clang, Debian's cross gcc with each target's C
# library (static linking: the binaries run under qemu-user with no sysroot)
# and qemu-user.  i686 static binaries run on the x86-64 host itself.
# clang-19 and llvm-19 measure structural coverage (make coverage): the
# default clang of bookworm (14) has no MC/DC; clang 19 does, with
# llvm-profdata-19 and llvm-cov-19 to merge and report it.
set -eu
missing=""
need() { # command package
    command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}
need_file() { # path package (what has no command of its own)
    [ -e "$1" ] || missing="$missing $2"
}
need clang clang
need aarch64-linux-gnu-gcc "gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
need arm-linux-gnueabihf-gcc "gcc-arm-linux-gnueabihf libc6-dev-armhf-cross"
need riscv64-linux-gnu-gcc "gcc-riscv64-linux-gnu libc6-dev-riscv64-cross"
need i686-linux-gnu-gcc "gcc-i686-linux-gnu libc6-dev-i386-cross"
need qemu-aarch64 qemu-user
need clang-19 clang-19
need llvm-cov-19 llvm-19
# clang-19 links -fprofile-instr-generate against this runtime, a package
# clang-19 only recommends (apt-install.sh installs no recommends)
need_file /usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.profile-x86_64.a libclang-rt-19-dev
if [ -z "$missing" ]; then
    echo "clang, clang-19/llvm-19, the cross compilers and qemu-user are installed"
    exit 0
fi
# shellcheck disable=SC2086
exec sh "$(dirname "$0")/apt-install.sh" $missing
