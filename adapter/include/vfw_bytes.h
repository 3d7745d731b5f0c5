/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_bytes.h - the adapter's one set of byte-order and buffer helpers.
 *
 * Guest structures (descriptors, commands, queue entries: include/vfwarp/)
 * are little endian; wire headers (Ethernet, IP, TCP, MPA/DDP/RDMAP) are
 * big endian. Every part of the adapter reads and writes them through
 * these, byte by byte, so nothing depends on the host's byte order or on
 * the alignment of guest-supplied data.
 */
#ifndef VFW_BYTES_H
#define VFW_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

static inline uint16_t vfw_ld_le16(const void *p)
{
    const uint8_t *b = p;

    return (uint16_t)(b[0] | b[1] << 8);
}

static inline uint32_t vfw_ld_le32(const void *p)
{
    const uint8_t *b = p;

    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

static inline uint64_t vfw_ld_le64(const void *p)
{
    const uint8_t *b = p;

    return (uint64_t)vfw_ld_le32(b) | (uint64_t)vfw_ld_le32(b + 4) << 32;
}

static inline void vfw_st_le16(void *p, uint16_t v)
{
    uint8_t *b = p;

    b[0] = (uint8_t)v;
    b[1] = (uint8_t)(v >> 8);
}

static inline void vfw_st_le32(void *p, uint32_t v)
{
    uint8_t *b = p;

    for (int i = 0; i < 4; i++) {
        b[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline void vfw_st_le64(void *p, uint64_t v)
{
    uint8_t *b = p;

    for (int i = 0; i < 8; i++) {
        b[i] = (uint8_t)(v >> (8 * i));
    }
}

static inline uint16_t vfw_ld_be16(const void *p)
{
    const uint8_t *b = p;

    return (uint16_t)(b[0] << 8 | b[1]);
}

static inline uint32_t vfw_ld_be32(const void *p)
{
    const uint8_t *b = p;

    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
           (uint32_t)b[2] << 8 | b[3];
}

static inline uint64_t vfw_ld_be64(const void *p)
{
    const uint8_t *b = p;

    return (uint64_t)vfw_ld_be32(b) << 32 | vfw_ld_be32(b + 4);
}

static inline void vfw_st_be16(void *p, uint16_t v)
{
    uint8_t *b = p;

    b[0] = (uint8_t)(v >> 8);
    b[1] = (uint8_t)v;
}

static inline void vfw_st_be32(void *p, uint32_t v)
{
    uint8_t *b = p;

    b[0] = (uint8_t)(v >> 24);
    b[1] = (uint8_t)(v >> 16);
    b[2] = (uint8_t)(v >> 8);
    b[3] = (uint8_t)v;
}

static inline void vfw_st_be64(void *p, uint64_t v)
{
    uint8_t *b = p;

    vfw_st_be32(b, (uint32_t)(v >> 32));
    vfw_st_be32(b + 4, (uint32_t)v);
}

/* Reserved fields must be zero: true if all n bytes at p are. */
static inline bool vfw_all_zero(const void *p, size_t n)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++) {
        if (b[i]) {
            return false;
        }
    }
    return true;
}

#endif /* VFW_BYTES_H */
