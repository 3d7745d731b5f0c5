/* SPDX-License-Identifier: GPL-2.0-or-later */
/* eth_pcap.c - classic pcap writer, see vfw_pcap.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_bytes.h"
#include "vfw_pcap.h"

#define PCAP_MAGIC_US      0xa1b2c3d4u
#define LINKTYPE_ETHERNET  1u

struct vfw_pcap {
    FILE *f;
    uint32_t snaplen;
    uint64_t count;
};

/* pcap is written in the writer's native byte order (readers detect it by
 * the magic); we write little-endian explicitly so files are identical on
 * every host. */

struct vfw_pcap *vfw_pcap_open(const char *path, uint32_t snaplen)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    struct vfw_pcap *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->snaplen = snaplen ? snaplen : 65535;
    p->f = fopen(path, "wb");
    if (!p->f) {
        free(p);
        return NULL;
    }
    uint8_t h[24];
    vfw_st_le32(h, PCAP_MAGIC_US);
    vfw_st_le16(h + 4, 2);
    vfw_st_le16(h + 6, 4);
    vfw_st_le32(h + 8, 0);             /* thiszone */
    vfw_st_le32(h + 12, 0);            /* sigfigs */
    vfw_st_le32(h + 16, p->snaplen);
    vfw_st_le32(h + 20, LINKTYPE_ETHERNET);
    if (fwrite(h, sizeof(h), 1, p->f) != 1) {
        int e = errno;
        fclose(p->f);
        free(p);
        errno = e ? e : EIO;
        return NULL;
    }
    return p;
}

int vfw_pcap_write(struct vfw_pcap *p, uint64_t ts_ns, const uint8_t *frame,
                   size_t len)
{
    if (!p || (!frame && len))
        return -EINVAL;
    if (len > 0xffffffffu)
        len = 0xffffffffu;
    uint32_t incl = len > p->snaplen ? p->snaplen : (uint32_t)len;
    uint8_t h[16];
    vfw_st_le32(h, (uint32_t)(ts_ns / 1000000000u));
    vfw_st_le32(h + 4, (uint32_t)(ts_ns % 1000000000u / 1000u));
    vfw_st_le32(h + 8, incl);
    vfw_st_le32(h + 12, (uint32_t)len);
    if (fwrite(h, sizeof(h), 1, p->f) != 1 ||
        (incl && fwrite(frame, incl, 1, p->f) != 1))
        return errno ? -errno : -EIO;
    p->count++;
    return 0;
}

int vfw_pcap_close(struct vfw_pcap *p)
{
    if (!p)
        return 0;
    int r = 0;
    if (fclose(p->f) != 0)
        r = errno ? -errno : -EIO;
    free(p);
    return r;
}

uint64_t vfw_pcap_count(const struct vfw_pcap *p)
{
    return p ? p->count : 0;
}
