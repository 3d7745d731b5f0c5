/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admin_internal.h - shared by the admin queue's files: admin.c (ring, VF
 * commands), admin_qos.c (2.1 QoS commands) and admin_esw.c (2.2 eswitch
 * mode). Descriptors are decoded
 * byte-wise (little endian) at the offsets of the structs in
 * vfwarp_admin.h, so the device model is right on any host.
 */
#ifndef VFW_ADMIN_INTERNAL_H
#define VFW_ADMIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfw_admin.h"
#include "vfw_bytes.h"

#define D_OPCODE  offsetof(struct vfw_aq_desc, opcode)
#define D_FLAGS   offsetof(struct vfw_aq_desc, flags)
#define D_STATUS  offsetof(struct vfw_aq_desc, status)
#define D_VF      offsetof(struct vfw_aq_desc, vf)
#define D_RSVD    offsetof(struct vfw_aq_desc, rsvd)
#define D_U       offsetof(struct vfw_aq_desc, u)
#define D_U_LEN   sizeof(((struct vfw_aq_desc *)0)->u)
#define P(type, field) (D_U + offsetof(struct type, field))


/* admin.c: commit `n` as VF vf's config (gen bumps if it changed). */
void admin_vf_commit(struct vfw_admin *a, uint16_t vf,
                     const struct vfw_vf_cfg *n);

/* admin_esw.c (2.2: eswitch mode) */
bool admin_esw_opcode(uint16_t op);
uint16_t admin_esw_exec(struct vfw_admin *a, uint16_t op, uint8_t *d);

/* admin_qos.c */
bool admin_qos_opcode(uint16_t op);
uint16_t admin_qos_exec(struct vfw_admin *a, uint16_t op, uint8_t *d);
/* SET_VF_RATE: VF vf's leaf gets tx_share/tx_max = min/max Mbit/s; a
 * status (OK without a scheduler). */
uint16_t admin_qos_vf_rate(struct vfw_admin *a, uint16_t vf, uint32_t min,
                           uint32_t max);
/* VF vf went away: its leaf back to the defaults (under the root). */
void admin_qos_vf_gone(struct vfw_admin *a, uint16_t vf);

#endif /* VFW_ADMIN_INTERNAL_H */
