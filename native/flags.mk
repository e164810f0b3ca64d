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
# Warnings: the kernel builds warning-free with these (make c-kernel).
SONNX_WARNFLAGS = -Wall -Wextra -Wconversion -Wpedantic -Werror
