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

__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t c, const uint8_t *p, size_t n, int clmul)
{
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
        return ~crc32c_hw(c, data, len, __builtin_cpu_supports("pclmul"));
#endif
    return ~crc32c_sw(c, data, len);
}
