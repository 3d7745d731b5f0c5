/* The host's side of the data path for the native tests: TX of the rings
 * is the data path's run, which it asks for with ops->kick; host_run()
 * runs it as QEMU's bottom half would, after the register write or timer
 * that asked (bounded: a run that keeps asking is a bug the tests see as
 * frames not sent). */
#ifndef VFW_TEST_DP_HOST_H
#define VFW_TEST_DP_HOST_H

#include <stdbool.h>

#include "vfw_dataplane.h"

static bool kicked;
static void t_kick(void *ctx) { (void)ctx; kicked = true; }

static void host_run(struct vfw_dp *dp)
{
    for (unsigned i = 0; i < 64 && kicked; i++) {
        kicked = false;
        vfw_dp_run(dp);
    }
}

static inline void dp_timer(struct vfw_dp *dp, unsigned fn)
{
    vfw_dp_timer(dp, fn);
    host_run(dp);
}

#endif
