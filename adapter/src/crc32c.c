/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crc32c.c - CRC32c (Castagnoli, reflected poly 0x82F63B78) for MPA FPDUs.
 *
 * The SSE4.2 CRC32 instruction does the work (one 8-byte step per
 * instruction); a runtime cpuid check picks it. Without SSE4.2 a bitwise
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
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t c, const uint8_t *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = _mm_crc32_u8(c, *p++);
        n--;
    }
    uint64_t c64 = c;
    for (; n >= 32; n -= 32, p += 32) {
        uint64_t x[4];
        memcpy(x, p, 32);
        c64 = _mm_crc32_u64(c64, x[0]);
        c64 = _mm_crc32_u64(c64, x[1]);
        c64 = _mm_crc32_u64(c64, x[2]);
        c64 = _mm_crc32_u64(c64, x[3]);
    }
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
        return ~crc32c_hw(c, data, len);
#endif
    return ~crc32c_sw(c, data, len);
}
