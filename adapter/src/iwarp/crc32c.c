/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crc32c.c - CRC32c (Castagnoli, reflected poly 0x82F63B78) for MPA FPDUs.
 *
 * The SSE4.2 CRC32 instruction does the work (one 8-byte step per
 * instruction), three chains at a time merged with PCLMULQDQ when the CPU
 * has it; a runtime cpuid check picks the path. Without SSE4.2 a bitwise
 * loop is used (correct, slow; such CPUs are not a target). We use the CPU
 * instruction rather than ISA-L so that QEMU does not need another library;
 * the measurement is in docs/adapter-iwarp.md.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "vfw_engine.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <nmmintrin.h>
#include <wmmintrin.h>
#define VFW_HAVE_X86 1
#else
#define VFW_HAVE_X86 0
#endif

static uint32_t crc32c_sw(uint32_t c, const uint8_t *p, size_t n)
{
    while (n--) {
        c ^= *p++;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    }
    return c;
}

#if VFW_HAVE_X86
/*
 * Three-lane form: a block of 3 x L bytes is run as three independent CRC
 * chains (hiding the CRC32 instruction's 3-cycle latency), then merged:
 *   crc = shift(crc_a, 2L) ^ shift(crc_b, L) ^ crc_c
 * where shift(c, n) = c * x^(8n) mod P is one carry-less multiply by the
 * constant x^(8n-33) mod P (bit-reflected) and one CRC32 of the 64-bit
 * product (the instruction multiplies by x^32 and reduces; the reflected
 * multiply adds one more x). The constants below are x^(8n-33) mod P for
 * the two lane sizes; tests/test_iwarp.c checks the result against a
 * bitwise CRC at every length and alignment across both block sizes.
 */
#define LANE_S 160u
#define LANE_L 2048u
static const uint32_t K_S1 = 0x878a92a7u, K_S2 = 0xbac2fd7bu; /* L, 2L */
static const uint32_t K_L1 = 0xa51b6135u, K_L2 = 0x82f89c77u;

__attribute__((target("sse4.2,pclmul")))
static uint32_t shift_mul(uint32_t c, uint32_t k)
{
    __m128i p = _mm_clmulepi64_si128(_mm_cvtsi32_si128((int)c),
                                     _mm_cvtsi32_si128((int)k), 0);
    return (uint32_t)_mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(p));
}

__attribute__((target("sse4.2,pclmul")))
static uint32_t crc_3lane(uint32_t c, const uint8_t **pp, size_t *np,
                          size_t lane, uint32_t k1, uint32_t k2)
{
    const uint8_t *p = *pp;
    size_t n = *np;
    while (n >= 3 * lane) {
        uint64_t a = c, b = 0, d = 0;
        for (size_t i = 0; i < lane; i += 8) {
            uint64_t x, y, z;
            memcpy(&x, p + i, 8);
            memcpy(&y, p + lane + i, 8);
            memcpy(&z, p + 2 * lane + i, 8);
            a = _mm_crc32_u64(a, x);
            b = _mm_crc32_u64(b, y);
            d = _mm_crc32_u64(d, z);
        }
        c = shift_mul((uint32_t)a, k2) ^ shift_mul((uint32_t)b, k1) ^
            (uint32_t)d;
        p += 3 * lane;
        n -= 3 * lane;
    }
    *pp = p;
    *np = n;
    return c;
}

/*
 * Folding form for CPUs with AVX-512 VPCLMULQDQ (RFC-free, the classic
 * "fold by carry-less multiply" of Intel's white paper, 4 x 128-bit lanes
 * per zmm): a 128-bit block B is moved D bits forward as
 *   B_lo * (x^(D+32) mod P) ^ B_hi * (x^(D-32) mod P)
 * (constants bit-reflected, shifted left by one, as for the CRC32 zlib
 * constants 0x154442bd4/0x1c6e41596), XORed into the block there. The
 * folded 128-bit residue has the same CRC as everything before it, so the
 * CRC32 instruction finishes it (two 8-byte steps) and the tail.
 * Constants: x^(D+32), x^(D-32) mod P for D = 2048, 512, 384, 256, 128;
 * tests/test_iwarp.c checks against the bitwise CRC across lengths.
 */
#define FOLD_K(a, b) _mm512_set_epi64((long long)(b), (long long)(a), \
    (long long)(b), (long long)(a), (long long)(b), (long long)(a), \
    (long long)(b), (long long)(a))

__attribute__((target("avx512f,vpclmulqdq")))
static inline __m512i fold512(__m512i x, __m512i k, __m512i data)
{
    __m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
    __m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);
    return _mm512_ternarylogic_epi64(lo, hi, data, 0x96);
}

__attribute__((target("avx512f,vpclmulqdq,sse4.2,pclmul")))
static inline __m128i fold128(__m128i x, uint64_t k1, uint64_t k2,
                              __m128i data)
{
    __m128i k = _mm_set_epi64x((long long)k2, (long long)k1);
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
    return _mm_xor_si128(_mm_xor_si128(lo, hi), data);
}

/* n >= 256. Consumes a multiple of 16 bytes; returns the raw register. */
__attribute__((target("avx512f,vpclmulqdq,sse4.2,pclmul")))
static uint32_t crc_fold(uint32_t c, const uint8_t **pp, size_t *np)
{
    const uint8_t *p = *pp;
    size_t n = *np;
    __m512i x0 = _mm512_loadu_si512((const void *)p);
    __m512i x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128));
    __m512i x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_castsi128_si512(
                                  _mm_cvtsi32_si128((int)c)));
    p += 256;
    n -= 256;
    const __m512i k2048 = FOLD_K(0xdcb17aa4u, 0xb9e02b86u);
    while (n >= 256) {
        x0 = fold512(x0, k2048, _mm512_loadu_si512((const void *)p));
        x1 = fold512(x1, k2048, _mm512_loadu_si512((const void *)(p + 64)));
        x2 = fold512(x2, k2048, _mm512_loadu_si512((const void *)(p + 128)));
        x3 = fold512(x3, k2048, _mm512_loadu_si512((const void *)(p + 192)));
        p += 256;
        n -= 256;
    }
    const __m512i k512 = FOLD_K(0x740eef02u, 0x9e4addf8u);
    x1 = fold512(x0, k512, x1);
    x2 = fold512(x1, k512, x2);
    x0 = fold512(x2, k512, x3);
    while (n >= 64) {
        x0 = fold512(x0, k512, _mm512_loadu_si512((const void *)p));
        p += 64;
        n -= 64;
    }
    __m128i l0 = _mm512_extracti32x4_epi32(x0, 0);
    __m128i l1 = _mm512_extracti32x4_epi32(x0, 1);
    __m128i l2 = _mm512_extracti32x4_epi32(x0, 2);
    __m128i v = _mm512_extracti32x4_epi32(x0, 3);
    v = fold128(l0, 0x1c291d04u, 0x1d82c63daull, v);
    v = fold128(l1, 0x1384aa63aull, 0xba4fc28eu, v);
    v = fold128(l2, 0xf20c0dfeu, 0x14cd00bd6ull, v);
    while (n >= 16) {
        v = fold128(v, 0xf20c0dfeu, 0x14cd00bd6ull,
                    _mm_loadu_si128((const __m128i *)(const void *)p));
        p += 16;
        n -= 16;
    }
    uint64_t r = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(v));
    r = _mm_crc32_u64(r, (uint64_t)_mm_extract_epi64(v, 1));
    *pp = p;
    *np = n;
    return (uint32_t)r;
}

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t c, const uint8_t *p, size_t n, int clmul)
{
    if (clmul == 2 && n >= 256)
        c = crc_fold(c, &p, &n);
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8(c, *p++);
        n--;
    }
    if (clmul) {
        c = crc_3lane(c, &p, &n, LANE_L, K_L1, K_L2);
        c = crc_3lane(c, &p, &n, LANE_S, K_S1, K_S2);
    }
    uint64_t c64 = c;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        c64 = _mm_crc32_u64(c64, x);
    }
    c = (uint32_t)c64;
    while (n--)
        c = _mm_crc32_u8(c, *p++);
    return c;
}
#endif

int vfw_crc32c_is_hw(void)
{
#if VFW_HAVE_X86
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
#else
    return 0;
#endif
}

/* zlib-style: crc 0 starts a new CRC; feed the result back to continue. */
uint32_t vfw_crc32c(uint32_t crc, const void *data, size_t len)
{
    uint32_t c = ~crc;
#if VFW_HAVE_X86
    if (vfw_crc32c_is_hw())
        return ~crc32c_hw(c, data, len,
                          (__builtin_cpu_supports("avx512f") &&
                           __builtin_cpu_supports("vpclmulqdq"))
                              ? 2 : __builtin_cpu_supports("pclmul"));
#endif
    return ~crc32c_sw(c, data, len);
}
