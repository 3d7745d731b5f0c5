/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_fpdu.c - MPA framing + DDP + RDMAP parsing and placement on an
 * established QP (reached through a real MPA handshake), against MRs over
 * a bounded fake function memory. Input byte 0: bit 0 = CRC on (then a CRC
 * mismatch ends the stream, so mostly off), bits 1..3 = chunking seed;
 * rest = the TCP byte stream from the peer.
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
    size_t off = 1;
    uint32_t chunk_seed = (data[0] >> 1) & 7;
    while (off < size) {
        size_t n = size - off;
        size_t lim = chunk_seed ? (size_t)(chunk_seed * 97 + (off & 63)) : n;
        if (n > lim)
            n = lim;
        size_t c = vfw_llp_recv(z.e, z.cep, data + off, n);
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
