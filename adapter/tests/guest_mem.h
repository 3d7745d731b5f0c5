/* A flat guest memory for the data-path tests: mem[] seen at MEM_BASE by
 * the DMA ops t_read/t_write (any function), which refuse what falls
 * outside it as the device's DMA would fail. */
#ifndef VFW_TEST_GUEST_MEM_H
#define VFW_TEST_GUEST_MEM_H
#include <stdint.h>
#include <string.h>

#define MEM_SIZE (1u << 22)
#define MEM_BASE 0x100000ull
static uint8_t mem[MEM_SIZE];

static int t_read(void *ctx, unsigned fn, uint64_t a, void *b, size_t l)
{
    (void)ctx; (void)fn;
    if (a < MEM_BASE || a - MEM_BASE > MEM_SIZE || l > MEM_SIZE - (a - MEM_BASE)) {
        return -1;
    }
    memcpy(b, mem + (a - MEM_BASE), l);
    return 0;
}

static int t_write(void *ctx, unsigned fn, uint64_t a, const void *b, size_t l)
{
    (void)ctx; (void)fn;
    if (a < MEM_BASE || a - MEM_BASE > MEM_SIZE || l > MEM_SIZE - (a - MEM_BASE)) {
        return -1;
    }
    memcpy(mem + (a - MEM_BASE), b, l);
    return 0;
}
#endif
