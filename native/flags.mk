# Compiler flags of the native kernel, pinned for IEEE 754 semantics: the ONE
# place they live.  Plain `NAME = words` lines (split each value on
# whitespace; no other make syntax is used here).  native/flags.py selects
# the rows for a compiler -- SONNX_CFLAGS, then SONNX_CFLAGS_GCC or
# SONNX_CFLAGS_CLANG by the compiler's identity, then SONNX_CFLAGS_ARCH_<A>
# for its target A (the first word of `$(CC) -dumpmachine`) -- and the
# Python build (setup.py), `make c-kernel KERNEL_CC=...` and the assurance
# tooling all take them from it.
#
# -std=c99 -O2                  the language and the optimisation level
# -fno-fast-math                no value-changing float optimisation
# -ffp-contract=off             no fused multiply-add: one rounding per `*`
# -fno-trapping-math            only the IEEE status flags are given up (the
#                               kernel never reads them): lets the compiler
#                               if-convert and vectorise the narrowings
# -ftree-vectorize              vectorise the loops at -O2
SONNX_CFLAGS = -std=c99 -O2 -fno-fast-math -ffp-contract=off -fno-trapping-math -ftree-vectorize
# gcc: -fexcess-precision=standard  float expressions rounded to their type
#      -fvect-cost-model=dynamic    (gcc 12's -O2 default is "very-cheap")
# clang 14 rejects both: it has no excess precision on the targets below
# (FLT_EVAL_METHOD 0, checked by sonnx_mul_config.h) and vectorises at -O2.
SONNX_CFLAGS_GCC = -fexcess-precision=standard -fvect-cost-model=dynamic
SONNX_CFLAGS_CLANG =
# The targets, and each one's row (docs/native-kernel.md, "Targets"):
# x86_64, i686   SSE2 arithmetic (-msse2 -mfpmath=sse): FLT_EVAL_METHOD 0; the
#                x87 is refused (sonnx_mul_config.h), so i686 needs SSE2
#                (Pentium 4 and later)
# aarch64        AdvSIMD is IEEE (subnormals kept when FPCR.FZ is clear)
# arm            ARMv7 hard-float (Debian armhf: VFPv3-D16, Thumb-2); NEON
#                may be added (-mfpu=neon): gcc vectorises float with it only
#                under -funsafe-math-optimizations, which the guard refuses
# riscv64        RV64GC, lp64d
SONNX_TARGETS = x86_64 i686 aarch64 arm riscv64
SONNX_CFLAGS_ARCH_X86_64 = -msse2 -mfpmath=sse
SONNX_CFLAGS_ARCH_I686 = -msse2 -mfpmath=sse
SONNX_CFLAGS_ARCH_AARCH64 =
SONNX_CFLAGS_ARCH_ARM =
SONNX_CFLAGS_ARCH_RISCV64 =
# The ISA variants selected at run time (x86-64) and their hardware loops, with
# the flags each adds to these and the CPU features it needs: native/isa.toml,
# their one table (native/flags.py reads it too).
# Warnings: the kernel builds warning-free with these (make c-kernel).
SONNX_WARNFLAGS = -Wall -Wextra -Wconversion -Wpedantic -Werror
