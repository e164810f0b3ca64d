# Compiler flags of the native kernel, pinned for IEEE 754 semantics: the ONE
# place they live.  Included by the Makefile (make c-kernel, make
# verify-exhaustive) and read by the Python build (plain `NAME = words` lines:
# split each value on whitespace; no other make syntax is used here).
#
# -std=c99 -O2                  the language and the optimisation level
# -fno-fast-math                no value-changing float optimisation
# -ffp-contract=off             no fused multiply-add: one rounding per `*`
# -fexcess-precision=standard   float expressions rounded to their type
# -fno-trapping-math            only the IEEE status flags are given up (the
#                               kernel never reads them): lets gcc if-convert
#                               and vectorise the float16 narrowing
# -ftree-vectorize -fvect-cost-model=dynamic   vectorise the loops at -O2
# x86-64: -msse2 -mfpmath=sse   SSE2 arithmetic (FLT_EVAL_METHOD 0, checked
#                               at compile time by sonnx_mul_config.h)
SONNX_CFLAGS = -std=c99 -O2 -fno-fast-math -ffp-contract=off -fexcess-precision=standard -fno-trapping-math -ftree-vectorize -fvect-cost-model=dynamic
SONNX_CFLAGS_X86_64 = -msse2 -mfpmath=sse
# x86-64 only, the variants selected at RUN time (sonnx_mul._native picks the
# widest one the CPU supports, __builtin_cpu_supports; SONNX_MUL_ISA overrides;
# docs/native-kernel.md).  The SAME proved sources native/src/*.c compiled
# again with the flags above PLUS these, their external symbols renamed by
# native/include/sonnx_mul_rename.h (sonnx_mul_avx2_*, sonnx_mul_avx512_*).
# No -mfma: AVX-512F has FMA instructions of its own, and -ffp-contract=off
# (above) keeps gcc from fusing `a * b + c`; a test disassembles the built
# extension and finds no FMA instruction.
SONNX_CFLAGS_AVX2 = -mavx2
SONNX_CFLAGS_AVX512 = -mavx2 -mavx512f -mavx512bw -mavx512vl -mprefer-vector-width=512
# The float16 hardware loop native/hw/sonnx_mul_f16c.c (F16C conversions,
# not WP-proved: verified exhaustively, make verify-exhaustive), selected at
# run time with the avx2 variant; compiled a second time with
# SONNX_CFLAGS_AVX512 added (its 16-wide loop) for the avx512 variant.
SONNX_CFLAGS_F16C = -mavx2 -mf16c
# The int8/uint8 wrap loop with streaming stores native/hw/sonnx_mul_stream8.c
# (not WP-proved: verified exhaustively, make verify-exhaustive) is compiled
# with SONNX_CFLAGS_AVX2 (32-wide, the avx2 variant) and SONNX_CFLAGS_AVX512
# (64-wide, AVX-512BW, the avx512 variant): no flags of its own.
# Warnings: the kernel builds warning-free with these (make c-kernel).
SONNX_WARNFLAGS = -Wall -Wextra -Wconversion -Wpedantic -Werror
