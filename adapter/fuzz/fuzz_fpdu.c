/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_fpdu.c - MPA framing + DDP + RDMAP parsing and placement on an
 * established QP (reached through a real MPA handshake), against MRs over
 * a bounded fake function memory. Input byte 0: bit 0 = CRC negotiated on
 * (the harness then rewrites the CRC of every FPDU it can delimit, so the
 * parser behind the CRC check is reached; bit 4 leaves one CRC wrong),
 * bits 1..3 = chunking seed; rest = the TCP byte stream from the peer.
 */
#include "fuzz_common_iwarp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static struct fz z;      /* reused buffer; state reset below */
    memset(&z, 0, sizeof(z));
    z.accept = 1;
    if (fz_setup(&z))
        abort();
    vfw_cep_create(z.e, &fz_llp, &z, 0, &z.cep);
    /* MPA v2 request, p2p with Write RTR, C per input */
    uint8_t req[24] = "MPA ID Req Frame";
    req[16] = (data[0] & 1) ? 0x40 : 0;
    req[17] = 2;
    req[18] = 0; req[19] = 4;
    req[20] = 0x80 | 0; req[21] = 4;      /* P2P, IRD 4 */
    req[22] = 0x80; req[23] = 4;          /* Write RTR, ORD 4 */
    vfw_llp_recv(z.e, z.cep, req, sizeof(req));
    fz_post(&z);
    /* the RTR (zero-length write) opens the responder's transmit gate */
    uint8_t rtr[2 + 14 + 4] = { 0, 14, 0xC1, 0x40, 0, 0, 1, 0 };
    if (!(data[0] & 1))
        vfw_llp_recv(z.e, z.cep, rtr, sizeof(rtr));
    fz_post(&z);
    static uint8_t buf[1 << 16];
    size_t blen = size - 1 < sizeof(buf) ? size - 1 : sizeof(buf);
    memcpy(buf, data + 1, blen);
    if (data[0] & 1) {
        /* fix up CRCs of the FPDUs the length fields delimit */
        size_t o = 0;
        int spoil = (data[0] & 0x10) != 0;
        while (o + 2 <= blen) {
            size_t ul = (size_t)buf[o] << 8 | buf[o + 1];
            size_t n = (2 + ul + 3) & ~(size_t)3;
            if (o + n + 4 > blen)
                break;
            uint32_t c = vfw_crc32c(0, buf + o, n) ^ (uint32_t)spoil;
            spoil = 0;
            buf[o + n] = (uint8_t)c;
            buf[o + n + 1] = (uint8_t)(c >> 8);
            buf[o + n + 2] = (uint8_t)(c >> 16);
            buf[o + n + 3] = (uint8_t)(c >> 24);
            o += n + 4;
        }
        /* the RTR with a valid CRC */
        uint8_t r[20] = { 0, 14, 0xC1, 0x40, 0, 0, 1, 0 };
        uint32_t c = vfw_crc32c(0, r, 16);
        r[16] = (uint8_t)c; r[17] = (uint8_t)(c >> 8);
        r[18] = (uint8_t)(c >> 16); r[19] = (uint8_t)(c >> 24);
        vfw_llp_recv(z.e, z.cep, r, sizeof(r));
    }
    uint32_t chunk_seed = (data[0] >> 1) & 7;
    size_t off = 0;
    while (off < blen) {
        size_t n = blen - off;
        size_t lim = chunk_seed ? (size_t)(chunk_seed * 97 + (off & 63)) : n;
        if (n > lim)
            n = lim;
        size_t c = vfw_llp_recv(z.e, z.cep, buf + off, n);
        off += c ? c : n;
        vfw_llp_writable(z.e, z.cep);
        fz_drain(&z);
    }
    z.now += 20ull * 1000 * 1000 * 1000;
    vfw_engine_poll(z.e);
    vfw_llp_closed(z.e, z.cep, -1);
    fz_drain(&z);
    vfw_engine_free(z.e);
    return 0;
}
