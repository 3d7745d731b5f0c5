/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_mbox.c - the VF-to-PF mailbox (src/dev/mbox.c): a request travels from a
 * VF's window to the PF's REQ window and a reply back, with the right
 * interrupts; one request in flight per VF; the PF cannot answer a VF that
 * did not ask; resets withdraw requests; bad accesses do not decode.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "vfw_mbox.h"

#include "check.h"

static struct vfw_mbox M;
static unsigned irq_fn[16], irq_vec[16], nirq;

static void irq(void *o, unsigned fn, unsigned vec)
{
    (void)o;
    if (nirq < 16) {
        irq_fn[nirq] = fn;
        irq_vec[nirq] = vec;
    }
    nirq++;
}

static const struct vfw_mbox_ops OPS = { irq, NULL };

static uint32_t rd(unsigned fn, uint64_t addr)
{
    uint32_t v = 0xdeadbeef;

    return vfw_mbox_read(&M, fn, addr, 4, &v) ? v : 0xdeadbeef;
}

static void wr(unsigned fn, uint64_t addr, uint32_t v)
{
    vfw_mbox_write(&M, fn, addr, v, 4);
}

static uint32_t ctrl(unsigned vec)
{
    return VFW_MBX_CTRL_IRQ_EN | vec << VFW_MBX_CTRL_VEC_SHIFT;
}

static int setup(void)
{
    nirq = 0;
    if (vfw_mbox_init(&M, &OPS, 8)) {
        return -1;
    }
    wr(0, VFW_REG_PF_MBX_CTRL, ctrl(3));
    return 0;
}

/* VF `vf` posts a request whose words are seed + i. */
static void vf_ask(unsigned vf, uint32_t seed)
{
    for (unsigned i = 0; i < VFW_MBX_MSG_WORDS; i++) {
        wr(1 + vf, VFW_REG_MBX_MSG(i), seed + i);
    }
    wr(1 + vf, VFW_REG_MBX_DOORBELL, 1);
}

static int t_round_trip(void)
{
    CHECK(setup() == 0);
    wr(1 + 5, VFW_REG_MBX_CTRL, ctrl(2));
    CHECK(rd(1 + 5, VFW_REG_MBX_CTRL) == ctrl(2));
    vf_ask(5, 0x100);
    CHECK(rd(1 + 5, VFW_REG_MBX_STATUS) == VFW_MBX_STS_BUSY);
    CHECK(nirq == 1 && irq_fn[0] == 0 && irq_vec[0] == 3);
    CHECK(rd(0, VFW_REG_PF_MBX_PEND(0)) == 1u << 5);
    CHECK(rd(0, VFW_REG_PF_MBX_PEND(1)) == 0);
    wr(0, VFW_REG_PF_MBX_SEL, 5);
    for (unsigned i = 0; i < VFW_MBX_MSG_WORDS; i++) {
        CHECK(rd(0, VFW_REG_PF_MBX_REQ(i)) == 0x100 + i);
    }
    /* the VF rewriting its window does not change the posted request */
    wr(1 + 5, VFW_REG_MBX_MSG(0), 0xbad);
    CHECK(rd(0, VFW_REG_PF_MBX_REQ(0)) == 0x100);
    for (unsigned i = 0; i < VFW_MBX_MSG_WORDS; i++) {
        wr(0, VFW_REG_PF_MBX_REPLY(i), 0x900 + i);
    }
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);
    CHECK(nirq == 2 && irq_fn[1] == 6 && irq_vec[1] == 2);
    CHECK(rd(1 + 5, VFW_REG_MBX_STATUS) == VFW_MBX_STS_REPLY);
    for (unsigned i = 0; i < VFW_MBX_MSG_WORDS; i++) {
        CHECK(rd(1 + 5, VFW_REG_MBX_MSG(i)) == 0x900 + i);
    }
    CHECK(rd(0, VFW_REG_PF_MBX_PEND(0)) == 0);
    CHECK(rd(0, VFW_REG_PF_MBX_REQ(0)) == 0);   /* nothing posted now */
    /* a second doorbell from the PF has nobody to answer */
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);
    CHECK(nirq == 2 && M.replies == 1);
    return 0;
}

static int t_one_in_flight(void)
{
    CHECK(setup() == 0);
    vf_ask(0, 1);
    vf_ask(0, 2);                 /* ignored: the first is not answered */
    CHECK(rd(1, VFW_REG_MBX_STATUS) ==
          (VFW_MBX_STS_BUSY | VFW_MBX_STS_OVERRUN));
    CHECK(nirq == 1 && M.requests == 1);
    wr(0, VFW_REG_PF_MBX_SEL, 0);
    CHECK(rd(0, VFW_REG_PF_MBX_REQ(0)) == 1);
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);
    /* OVERRUN stays visible until the VF's next request */
    CHECK(rd(1, VFW_REG_MBX_STATUS) ==
          (VFW_MBX_STS_REPLY | VFW_MBX_STS_OVERRUN));
    vf_ask(0, 3);                 /* the next request clears REPLY */
    CHECK(rd(1, VFW_REG_MBX_STATUS) == VFW_MBX_STS_BUSY);
    return 0;
}

static int t_masked_irqs(void)
{
    CHECK(setup() == 0);
    wr(0, VFW_REG_PF_MBX_CTRL, 3 << VFW_MBX_CTRL_VEC_SHIFT);  /* masked */
    vf_ask(7, 0);
    CHECK(nirq == 0 && rd(0, VFW_REG_PF_MBX_PEND(0)) == 1u << 7);
    wr(0, VFW_REG_PF_MBX_CTRL, ctrl(3));      /* unmask: fires now */
    CHECK(nirq == 1 && irq_fn[0] == 0);
    wr(0, VFW_REG_PF_MBX_SEL, 7);
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);        /* VF 7 has IRQ_EN clear */
    CHECK(nirq == 1 && rd(8, VFW_REG_MBX_STATUS) == VFW_MBX_STS_REPLY);
    wr(8, VFW_REG_MBX_CTRL, ctrl(1));
    CHECK(nirq == 2 && irq_fn[1] == 8 && irq_vec[1] == 1);
    return 0;
}

static int t_resets_and_bounds(void)
{
    uint32_t v;

    CHECK(setup() == 0);
    vf_ask(2, 0x10);
    vf_ask(3, 0x20);
    vfw_mbox_reset_vf(&M, 2);      /* FLR of VF 2 withdraws its request */
    CHECK(rd(0, VFW_REG_PF_MBX_PEND(0)) == 1u << 3);
    CHECK(rd(3, VFW_REG_MBX_STATUS) == 0 && rd(3, VFW_REG_MBX_MSG(0)) == 0);
    wr(0, VFW_REG_PF_MBX_SEL, 2);
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);
    CHECK(rd(3, VFW_REG_MBX_STATUS) == 0 && M.replies == 0);
    /* a select past the VFs reads nothing and answers nobody */
    wr(0, VFW_REG_PF_MBX_SEL, 0xffffffffu);
    CHECK(rd(0, VFW_REG_PF_MBX_SEL) == 0xffffffffu);
    CHECK(rd(0, VFW_REG_PF_MBX_REQ(0)) == 0);
    wr(0, VFW_REG_PF_MBX_DOORBELL, 1);
    CHECK(M.replies == 0);
    /* functions past total_vfs, odd sizes and offsets do not decode */
    CHECK(!vfw_mbox_read(&M, 9, VFW_REG_MBX_STATUS, 4, &v) && v == 0);
    CHECK(!vfw_mbox_write(&M, 9, VFW_REG_MBX_DOORBELL, 1, 4));
    CHECK(!vfw_mbox_read(&M, 1, VFW_REG_MBX_STATUS, 2, &v));
    CHECK(!vfw_mbox_read(&M, 1, VFW_REG_MBX_MSG(0) + 1, 4, &v));
    CHECK(!vfw_mbox_read(&M, 1, 0x0300, 4, &v));
    CHECK(!vfw_mbox_owns(0x01fc) && vfw_mbox_owns(0x02fc));
    vfw_mbox_reset(&M);             /* PF reset: everything empty */
    CHECK(rd(0, VFW_REG_PF_MBX_PEND(0)) == 0 &&
          rd(0, VFW_REG_PF_MBX_CTRL) == 0 && rd(4, VFW_REG_MBX_STATUS) == 0);
    CHECK(vfw_mbox_init(&M, &OPS, VFW_FUNC_MAX_VFS + 1) == -1);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct unit_test tests[] = {
        {"round_trip", t_round_trip},
        {"one_in_flight", t_one_in_flight},
        {"masked_irqs", t_masked_irqs},
        {"resets_and_bounds", t_resets_and_bounds},
    };

    return run_tests("mbox", tests, sizeof(tests) / sizeof(tests[0]), argc,
                     argv, NULL);
}
