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
# x86-64 only, the variants selected at RUN time (sonnx_mul._native picks the
# widest one the CPU supports, __builtin_cpu_supports; SONNX_MUL_ISA overrides;
# docs/native-kernel.md).  The SAME proved sources native/src/*.c compiled
# again with the flags above PLUS these, their external symbols renamed by
# native/include/sonnx_mul_rename.h (sonnx_mul_avx2_*, sonnx_mul_avx512_*).
# No -mfma: AVX-512F has FMA instructions of its own, and -ffp-contract=off
# (above) keeps gcc from fusing `a * b + c`; a test disassembles the built
# extension and finds no FMA instruction.
# AVX-512DQ: gcc's 64-bit vector multiply becomes one vpmullq instead of three
# vpmuludq, which takes the 64-bit checked scans to 0.5-0.6x their time
# (docs/native-kernel.md, "ISA variants").
SONNX_CFLAGS_AVX2 = -mavx2
SONNX_CFLAGS_AVX512 = -mavx2 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mprefer-vector-width=512
# The CPU features (/proc/cpuinfo flags, __builtin_cpu_supports names) that
# code compiled with each row above needs, and the variants' run-time rule:
# avx2 needs SONNX_CPU_AVX2 and SONNX_CPU_F16C, avx512 those and
# SONNX_CPU_AVX512.  The dispatch (src/sonnx_mul/_native_variants.c) and the
# exhaustive harness (native/verify/exhaustive.c) test these names; a test
# compares their __builtin_cpu_supports calls with these rows.
SONNX_CPU_AVX2 = avx2
SONNX_CPU_AVX512 = avx2 avx512f avx512bw avx512vl avx512dq
SONNX_CPU_F16C = avx2 f16c
# The float16 hardware loop native/hw/sonnx_mul_f16c.c (F16C conversions;
# WP proves the loop under the proved loop's contract from the admitted
# contract of its vector operation, which make verify-exhaustive checks on
# every pair against the proved loop), selected at
# run time with the avx2 variant; compiled a second time with
# SONNX_CFLAGS_AVX512 added (its 16-wide loop) for the avx512 variant.
SONNX_CFLAGS_F16C = -mavx2 -mf16c
# The int8/uint8 wrap loop with streaming stores native/hw/sonnx_mul_stream8.c
# (proved and checked as the float16 loop above) is compiled
# with SONNX_CFLAGS_AVX2 (32-wide, the avx2 variant) and SONNX_CFLAGS_AVX512
# (64-wide, AVX-512BW, the avx512 variant): no flags of its own.
# Warnings: the kernel builds warning-free with these (make c-kernel).
SONNX_WARNFLAGS = -Wall -Wextra -Wconversion -Wpedantic -Werror
