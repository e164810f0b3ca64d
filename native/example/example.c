/* example.c -- the native kernel without Python: a few known answers of every
 * kind of loop, checked bit for bit.  Prints each result; exits 0 when all
 * agree, 1 otherwise.  Built and run by `make c-kernel`. */
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <fenv.h>
#include "sonnx_mul_kernel.h"
#include "sonnx_mul_fpenv.h"

static int failures = 0;

static void check(const char *what, unsigned long long got, unsigned long long want)
{
    const int ok = (got == want);
    (void)printf("%-44s %20llu %s\n", what, got, ok ? "ok" : "WRONG");
    if (!ok) {
        failures++;
    }
}

/* A foreign floating-point environment, as another library may leave it:
   rounding toward zero and, on x86, flush-to-zero and denormals-are-zero. */
static void set_foreign_environment(void)
{
    (void)fesetround(FE_TOWARDZERO);
#if defined(__SSE2__)
    _mm_setcsr(_mm_getcsr() | 0x8040U); /* FTZ (bit 15), DAZ (bit 6) */
#endif
}

static uint32_t bits_of(float x)
{
    uint32_t u;
    (void)memcpy(&u, &x, sizeof u);
    return u;
}

int main(void)
{
    /* wrap: 100 * 100 = 10000 = 39 * 256 + 16 in int8; in place (c == a) */
    int8_t x8[2] = {100, -128};
    const int8_t y8[2] = {100, -1};
    sonnx_mul_wrap_i8(x8, y8, x8, 2U);
    check("wrap int8 100*100", (unsigned long long)(uint8_t)x8[0], 16U);
    check("wrap int8 -128*-1 (= -128)", (unsigned long long)(uint8_t)x8[1], 0x80U);

    const int64_t a64[1] = {INT64_MIN};
    const int64_t b64[1] = {-1};
    int64_t c64[1] = {0};
    sonnx_mul_wrap_i64(a64, b64, c64, 1U);
    check("wrap int64 INT64_MIN*-1", (unsigned long long)(uint64_t)c64[0], 0x8000000000000000ULL);
    check("first_overflow int64 INT64_MIN*-1", sonnx_mul_first_overflow_i64(a64, b64, 1U), 0U);

    const uint64_t u1[3] = {4294967296ULL, 4294967295ULL, 4294967296ULL};
    const uint64_t u2[3] = {4294967295ULL, 4294967297ULL, 4294967296ULL};
    check("first_overflow uint64 (2^64-1 fits twice)", sonnx_mul_first_overflow_u64(u1, u2, 3U), 2U);

    /* checked: overflow at index 1, nothing written */
    const int16_t a16[3] = {200, 300, 2};
    const int16_t b16[3] = {100, 200, 3};
    int16_t c16[3] = {7, 7, 7};
    check("checked int16 first overflow", sonnx_mul_checked_i16(a16, b16, c16, 3U), 1U);
    check("checked int16 wrote nothing", (unsigned long long)(c16[0] == 7 && c16[1] == 7 && c16[2] == 7), 1U);
    check("checked int16 all fit", sonnx_mul_checked_i16(a16, a16 + 2, c16, 1U), 1U);
    check("checked int16 value 200*2", (unsigned long long)c16[0], 400U);

    const uint8_t ua[1] = {255U};
    uint8_t uc[1] = {0U};
    sonnx_mul_wrap_u8(ua, ua, uc, 1U);
    check("wrap uint8 255*255", uc[0], 1U);

    /* floats: 0.1f * 3 rounds to nearest even; -0 kept; 0 * inf is NaN */
    const float fa[3] = {0.1F, -0.0F, 0.0F};
    const float fb[3] = {3.0F, 5.0F, 1.0F / 0.0F};
    float fc[3];
    sonnx_mul_f32(fa, fb, fc, 3U);
    check("f32 0.1f*3", bits_of(fc[0]), 0x3E99999AU);
    check("f32 -0*5", bits_of(fc[1]), 0x80000000U);
    check("f32 0*inf is the canonical NaN", bits_of(fc[2]), 0x7FC00000U);

    /* The NaN rule: every NaN product is the canonical quiet NaN, whatever
       the operands' signs and payloads (signalling NaNs included). */
    const uint64_t nan_a[2] = {0xFFF0000000000001ULL, 0x0000000000000000ULL};
    const uint64_t nan_b[2] = {0x4000000000000000ULL, 0xFFF0000000000000ULL};
    double da[2];
    double db[2];
    double dc[2];
    uint64_t dbits[2];
    (void)memcpy(da, nan_a, sizeof da);
    (void)memcpy(db, nan_b, sizeof db);
    sonnx_mul_f64(da, db, dc, 2U);
    (void)memcpy(dbits, dc, sizeof dbits);
    check("f64 -sNaN*2 is the canonical NaN", dbits[0], 0x7FF8000000000000ULL);
    check("f64 0*-inf is the canonical NaN", dbits[1], 0x7FF8000000000000ULL);

    /* float16: 1.0009765625 (0x3C01)^2 = 1.00195... rounds to 0x3C02;
       the least subnormal 0x0001 * 0.5 (0x3800) is a tie: to even, +0;
       65504 * 2 overflows to inf. */
    const uint16_t ha[4] = {0x3C01U, 0x0001U, 0x7BFFU, 0x8001U};
    const uint16_t hb[4] = {0x3C01U, 0x3800U, 0x4000U, 0x3E00U};
    uint16_t hc[4];
    sonnx_mul_f16(ha, hb, hc, 4U);
    check("f16 0x3C01^2", hc[0], 0x3C02U);
    check("f16 least subnormal * 0.5 (tie to +0)", hc[1], 0x0000U);
    check("f16 65504*2 = inf", hc[2], 0x7C00U);
    check("f16 -least subnormal * 1.5 (tie to -2^-23)", hc[3], 0x8002U);
    const uint16_t hn[2] = {0xFC01U, 0x7C00U};
    const uint16_t hm[2] = {0x3C00U, 0x8000U};
    sonnx_mul_f16(hn, hm, hc, 2U);
    check("f16 -sNaN*1 is the canonical NaN", hc[0], 0x7E00U);
    check("f16 inf*-0 is the canonical NaN", hc[1], 0x7E00U);

    /* bfloat16: 1.0078125 (0x3F81)^2 = 1.0157 rounds to 0x3F82 */
    const uint16_t ba[3] = {0x3F81U, 0x7FC1U, 0x3F80U};
    const uint16_t bb[3] = {0x3F81U, 0x3F80U, 0xFF81U};
    uint16_t bc[3];
    sonnx_mul_bf16(ba, bb, bc, 3U);
    check("bf16 0x3F81^2", bc[0], 0x3F82U);
    check("bf16 NaN(payload)*1 is the canonical NaN", bc[1], 0x7FC0U);
    check("bf16 1*-sNaN is the canonical NaN", bc[2], 0x7FC0U);
    check("f32->f16 65519 (rounds down)", sonnx_mul_f32_to_f16_bits(65519.0F), 0x7BFFU);
    check("f32->f16 65520 (rounds to inf)", sonnx_mul_f32_to_f16_bits(65520.0F), 0x7C00U);
    check("f16->f32 0x0001 = 2^-24", bits_of(sonnx_mul_f16_bits_to_f32(0x0001U)), 0x33800000U);

    /* The environment bracket (sonnx_mul_fpenv.h): under a foreign
       environment the bracketed call gives the known answers, the bare call
       does not (0.1f*3 rounded toward zero; 2^-126 * 0.5 flushed). */
    const float ea[2] = {0.1F, 1.17549435e-38F};
    const float eb[2] = {3.0F, 0.5F};
    float bare[2];
    float bracketed[2];
    set_foreign_environment();
    sonnx_mul_f32(ea, eb, bare, 2U);
    sonnx_mul_fpenv saved = sonnx_mul_fpenv_enter();
    sonnx_mul_f32(ea, eb, bracketed, 2U);
    sonnx_mul_fpenv_leave(&saved);
    const int still_foreign = fegetround() == FE_TOWARDZERO;
    (void)fesetround(FE_TONEAREST);
#if defined(__SSE2__)
    _mm_setcsr(0x1F80U);
#endif
    check("f32 0.1f*3, bracketed, foreign environment", bits_of(bracketed[0]), 0x3E99999AU);
    check("f32 2^-126*0.5, bracketed, foreign environment", bits_of(bracketed[1]), 0x00400000U);
    check("f32 0.1f*3, bare call, foreign environment differs", bits_of(bare[0]) != 0x3E99999AU, 1U);
    check("the caller's environment restored", (unsigned long long)still_foreign, 1U);

    (void)printf("%s\n", failures == 0 ? "all known answers agree" : "KNOWN ANSWER FAILURES");
    return (failures == 0) ? 0 : 1;
}
