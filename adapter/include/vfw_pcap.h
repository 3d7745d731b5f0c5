/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_pcap.h - classic pcap writer (LINKTYPE_ETHERNET, microsecond
 * timestamps, version 2.4) for captures of the adapter's wire. Readable by
 * tcpdump, tshark and Wireshark. Not thread-safe; one writer per file.
 */
#ifndef VFW_PCAP_H
#define VFW_PCAP_H

#include <stddef.h>
#include <stdint.h>

struct vfw_pcap;

/* Create/truncate `path` and write the global header. snaplen 0 = 65535.
 * Returns NULL on error (errno set). */
struct vfw_pcap *vfw_pcap_open(const char *path, uint32_t snaplen);
/* Append one frame (no FCS) captured at ts_ns (any epoch; wall clock gives
 * readable dates). Frames longer than snaplen are truncated in the record.
 * Returns 0 or -errno. */
int vfw_pcap_write(struct vfw_pcap *p, uint64_t ts_ns, const uint8_t *frame,
                   size_t len);
/* Flush and close; returns 0 or -errno. NULL is accepted. */
int vfw_pcap_close(struct vfw_pcap *p);
/* Frames written so far. */
uint64_t vfw_pcap_count(const struct vfw_pcap *p);

#endif /* VFW_PCAP_H */
