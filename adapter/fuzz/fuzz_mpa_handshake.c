/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_mpa_handshake.c - the MPA Request/Reply exchange (RFC 5044/6581)
 * from both roles. Byte 0 selects: bit 0 = active (we sent a Request and
 * parse the input as the Reply) or passive (input is the Request); bit 1 =
 * reject instead of accept; bits 2..4 = our connect parameters. Whatever
 * follows the handshake frame is parsed as FPDUs.
 */
#include <stdio.h>
#include "fuzz_common_iwarp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static struct fz z;
    memset(&z, 0, sizeof(z));
    bool active = data[0] & 1;
    z.accept = (data[0] & 2) ? 2 : 1;
    if (fz_setup(&z))
        abort();
    vfw_cep_create(z.e, &fz_llp, &z, active, &z.cep);
    if (active) {
        struct vfw_conn_param p = { .mpa_rev = (data[0] & 4) ? 2 : 1,
            .p2p = (data[0] >> 3) & 1, .rtr_mask = (data[0] >> 4) & 7,
            .crc = (data[0] >> 7) & 1, .ord = 3, .ird = 2, .pdata_len = 3 };
        memcpy(p.pdata, "abc", 3);
        int rc = vfw_connect(z.e, z.cep, z.qp, &p);
        if (rc) {
            fprintf(stderr, "connect %d\n", rc);
            abort();
        }
    }
    fz_post(&z);
    size_t off = 1;
    while (off < size) {
        size_t n = size - off;
        size_t lim = 1 + (data[off] & 31) * 7;
        if (n > lim)
            n = lim;
        size_t c = vfw_llp_recv(z.e, z.cep, data + off, n);
        off += c ? c : n;
        fz_drain(&z);
    }
    z.now += 20ull * 1000 * 1000 * 1000;
    vfw_engine_poll(z.e);
    vfw_llp_closed(z.e, z.cep, 0);
    vfw_llp_closed(z.e, z.cep, 0);
    fz_drain(&z);
    vfw_engine_free(z.e);
    return 0;
}
