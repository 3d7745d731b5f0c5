// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * vfw_hostile: a hostile tenant of a vfwarp VF (issue 33). It owns the VF
 * through vfio-pci (no vfwarp driver: the test binds the VF to vfio-pci
 * first) and, for a bounded time, does what an attacker who owns the
 * function can: everything the VF's BARs, rings, commands, WQEs, doorbells,
 * MSI-X table and DMA addresses allow, following include/vfwarp/ so that the
 * crafted inputs get past the first checks and reach the device's deep code.
 *
 *   vfw_hostile BDF SECS SEED [-p PF_BDF] [-a OWN_IP] [-c PEER_IP,PEER_MAC]
 *               [-o PHASE[,PHASE...]]
 *
 * The VF's IOMMU domain (VFIO type1) holds the process's DMA buffer at
 * DMA_IOVA and, as peer-to-peer mappings (type1 accepts the PFNMAP vmas of
 * a BAR mmap), the VF's own BAR0, BAR2 (MSI-X table) and BAR4 (doorbells);
 * also the PF's BAR0 (sysfs resource0) and the PCIe configuration space
 * (ECAM through /dev/mem) when the kernel lets root map them, which a
 * kernel with CONFIG_IO_STRICT_DEVMEM refuses while a driver holds the
 * region: the program says which, it never pretends. Those IOVAs are then
 * used as MSI-X message addresses, MR pages, ring bases and page lists, so
 * the device's own DMA and interrupts come back into BARs (a re-entrant
 * register write, doorbell or FLR from inside the device's own work: issue
 * 33 class 1).
 *
 * Phases, in rounds of short slices until SECS pass (each loop also bounded
 * by a count): regs (random register and doorbell writes), verbs (crafted
 * command sequences and WQEs, and random commands), alias (rings aliased and
 * overlapping, sizes at their limits), aim (DMA and MSI-X aimed at BARs and
 * config space), flr (VFIO_DEVICE_RESET and a DEVCTL Initiate-FLR write while
 * the function's queues are busy), peer (with -c: RDMA connections to a peer
 * whose RDMA READs and WRITEs land in MRs whose pages are the VF's own BARs).
 * -o runs only the phases named (to find which one costs a neighbour what).
 * Output: what each aim got (mapped at an IOVA, or refused with errno), a
 * count line per phase, and "storm done" at the end. Exit 0 when the storm
 * ran; 2 on a set-up error (no VFIO, no BAR).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_ring.h"
#include "vfwarp/vfwarp_mbox.h"
#include "vfwarp/vfwarp_rdma.h"

/* ---- IOVA layout of the VF's domain ------------------------------------- */
#define DMA_IOVA     0x10000000ull
#define DMA_LEN      (8u << 20)
#define BAR0_IOVA    0x20000000ull     /* own BAR0 (VFW_BAR0_SIZE) */
#define BAR2_IOVA    0x20100000ull     /* own MSI-X BAR (table + PBA) */
#define BAR4_IOVA    0x20200000ull     /* own doorbell BAR */
#define PFBAR_IOVA   0x20400000ull     /* the PF's BAR0, if root may map it */
#define ECAM_IOVA    0x20800000ull     /* config space pages, if mappable */
#define HOLE_IOVA    0x7ff00000ull     /* never mapped: DMA faults */

/* offsets in the DMA buffer */
#define OFF_RCQ      0x000000u    /* command ring, 256 x 128 B = 32 KiB */
#define OFF_EQ       0x010000u    /* event ring, up to 1024 x 64 B */
#define OFF_PDATA    0x020000u    /* EQ private data slots, 64 x 512 B */
#define OFF_PGL      0x030000u    /* page lists, 64 KiB */
#define OFF_RINGS    0x100000u    /* SQ/RQ/CQ rings, 1 MiB */
#define OFF_ETH      0x200000u    /* Ethernet rings and buffers, 1 MiB */
#define OFF_MR       0x300000u    /* MR pages, 1 MiB */
#define OFF_BIGPGL   0x400000u    /* a page list of VFW_RDMA_MAX_MR_PGL entries (2 MiB) */
#define OFF_MISC     0x600000u    /* peer messages, 2 MiB */

/* ---- state ---------------------------------------------------------------- */
static struct {
	int container, group, dev;
	volatile uint8_t *bar0, *bar2, *bar4;
	uint64_t cfg_off;          /* config region offset in the device fd */
	unsigned pcie_cap;         /* PCIe capability offset */
	uint8_t *dma;
	int efd[VFW_VF_MSIX_VECTORS];
	bool msix_on;
	uint64_t rng;
	double end;
	uint8_t mac[6];
	uint32_t own_ip;           /* network order */
	uint32_t peer_ip;
	uint8_t peer_mac[6];
	bool have_peer;
	/* aims: IOVAs mapped to MMIO / config space (0 = not available) */
	uint64_t pf_bar_iova, ecam_own_iova, ecam_pf_iova;
	unsigned pf_pcie_cap_cmd;  /* the PF's PCI_COMMAND value (rewritten as is) */
	/* command ring as the program believes it is */
	uint32_t rcq_len, rcq_tail;
	uint64_t rcq_iova;
	struct vfw_rcmd *rcq;
	uint32_t cookie;
} g;

enum { P_REGS, P_VERBS, P_ALIAS, P_AIM, P_FLR, P_PEER, P_N };
static const char *const pname[P_N] = { "regs", "verbs", "alias", "aim", "flr", "peer" };
static struct {
	uint64_t ops, cmds, cmd_ok, cmd_err, cmd_timeout, wqes, doorbells, msix_forged,
		 irqs, resets, sigbus, connects, established, slices;
} cnt[P_N];
static int cur;                 /* the phase running, for the counters */

static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_armed;

static void on_sigbus(int sig)
{
	(void)sig;
	if (bus_armed)
		siglongjmp(bus_jmp, 1);
	_exit(3);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(void)
{
	uint64_t z = (g.rng += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "vfw_hostile: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(2);
}

static bool time_left(void)
{
	return now() < g.end;
}

/* ---- MMIO ------------------------------------------------------------------ */
static inline void w32(volatile uint8_t *b, uint32_t off, uint32_t v)
{
	*(volatile uint32_t *)(b + off) = v;
	__sync_synchronize();
}

static inline uint32_t r32(volatile uint8_t *b, uint32_t off)
{
	return *(volatile uint32_t *)(b + off);
}

static void r0w(uint32_t off, uint32_t v)
{
	w32(g.bar0, off, v);
	cnt[cur].ops++;
}

static uint64_t iova(uint32_t off)
{
	return DMA_IOVA + off;
}

static void *dmap(uint32_t off)
{
	return g.dma + off;
}

static void doorbell(unsigned page, unsigned reg, uint32_t v)
{
	w32(g.bar4, (page % VFW_DB_PAGES) * VFW_DB_PAGE_SIZE + reg, v);
	cnt[cur].doorbells++;
}

/* ---- VFIO ------------------------------------------------------------------ */
static int cfg_read(unsigned off, void *buf, size_t n)
{
	return pread(g.dev, buf, n, g.cfg_off + off) == (ssize_t)n ? 0 : -1;
}

static int cfg_write(unsigned off, const void *buf, size_t n)
{
	return pwrite(g.dev, buf, n, g.cfg_off + off) == (ssize_t)n ? 0 : -1;
}

static void map_dma(void *vaddr, uint64_t io, uint64_t len, const char *what)
{
	struct vfio_iommu_type1_dma_map m = {
		.argsz = sizeof(m), .vaddr = (uintptr_t)vaddr, .iova = io, .size = len,
		.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
	};

	if (ioctl(g.container, VFIO_IOMMU_MAP_DMA, &m))
		die("VFIO_IOMMU_MAP_DMA %s: %s", what, strerror(errno));
}

/* Map BAR `index` of the VF and, as a peer-to-peer mapping, into its own
 * IOMMU domain at `io`. */
static volatile uint8_t *map_bar(unsigned index, uint64_t io, uint64_t want)
{
	struct vfio_region_info ri = { .argsz = sizeof(ri), .index = index };
	void *p;

	if (ioctl(g.dev, VFIO_DEVICE_GET_REGION_INFO, &ri))
		die("region info BAR%u: %s", index, strerror(errno));
	if (ri.size < want || !(ri.flags & VFIO_REGION_INFO_FLAG_MMAP))
		die("BAR%u: size 0x%llx flags 0x%x (not mappable)", index,
		    (unsigned long long)ri.size, ri.flags);
	p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, g.dev, ri.offset);
	if (p == MAP_FAILED)
		die("mmap BAR%u: %s", index, strerror(errno));
	map_dma(p, io, want, "own BAR");
	printf("aim own-bar%u: mapped at iova 0x%" PRIx64 " (%" PRIu64 " KiB)\n", index, io,
	       want >> 10);
	return p;
}

static unsigned find_cap(unsigned id, unsigned (*rd8)(unsigned))
{
	unsigned pos = rd8(PCI_CAPABILITY_LIST) & ~3u;

	for (int i = 0; pos && i < 48; i++) {
		if (rd8(pos) == id)
			return pos;
		pos = rd8(pos + 1) & ~3u;
	}
	return 0;
}

static unsigned vf_rd8(unsigned off)
{
	uint8_t v = 0;

	cfg_read(off, &v, 1);
	return v;
}

static void bus_master_on(void)
{
	uint16_t cmd = 0;

	cfg_read(PCI_COMMAND, &cmd, 2);
	cmd |= PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER;
	cfg_write(PCI_COMMAND, &cmd, 2);
}

/* MSI-X on, with an eventfd per vector: vfio's kernel side programs the
 * table with real (remapped) messages, which the aim phase then overwrites
 * through the mmapped table. */
static void msix_on(void)
{
	char buf[sizeof(struct vfio_irq_set) + sizeof(int) * VFW_VF_MSIX_VECTORS];
	struct vfio_irq_set *s = (void *)buf;

	s->argsz = sizeof(buf);
	s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
	s->index = VFIO_PCI_MSIX_IRQ_INDEX;
	s->start = 0;
	s->count = VFW_VF_MSIX_VECTORS;
	memcpy(s->data, g.efd, sizeof(g.efd));
	g.msix_on = ioctl(g.dev, VFIO_DEVICE_SET_IRQS, s) == 0;
	if (!g.msix_on)
		printf("msix: VFIO_DEVICE_SET_IRQS refused: %s\n", strerror(errno));
}

static void drain_irqs(void)
{
	for (int i = 0; i < VFW_VF_MSIX_VECTORS; i++) {
		uint64_t v;

		if (read(g.efd[i], &v, sizeof(v)) == sizeof(v))
			cnt[cur].irqs += v;
	}
}

static void vfio_open(const char *bdf)
{
	char path[256], link[256];
	ssize_t n;
	struct vfio_group_status gs = { .argsz = sizeof(gs) };
	struct vfio_region_info ri = { .argsz = sizeof(ri), .index = VFIO_PCI_CONFIG_REGION_INDEX };

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", bdf);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		die("%s: %s", path, strerror(errno));
	link[n] = 0;
	snprintf(path, sizeof(path), "/dev/vfio/%s", strrchr(link, '/') + 1);
	g.container = open("/dev/vfio/vfio", O_RDWR);
	g.group = open(path, O_RDWR);
	if (g.container < 0 || g.group < 0)
		die("open /dev/vfio/vfio, %s: %s", path, strerror(errno));
	if (ioctl(g.group, VFIO_GROUP_GET_STATUS, &gs) || !(gs.flags & VFIO_GROUP_FLAGS_VIABLE))
		die("%s: group not viable (another device of the group not on vfio-pci?)", path);
	if (ioctl(g.group, VFIO_GROUP_SET_CONTAINER, &g.container) ||
	    ioctl(g.container, VFIO_SET_IOMMU, VFIO_TYPE1v2_IOMMU))
		die("container / type1: %s", strerror(errno));
	g.dev = ioctl(g.group, VFIO_GROUP_GET_DEVICE_FD, bdf);
	if (g.dev < 0)
		die("VFIO_GROUP_GET_DEVICE_FD %s: %s", bdf, strerror(errno));
	if (ioctl(g.dev, VFIO_DEVICE_GET_REGION_INFO, &ri))
		die("config region: %s", strerror(errno));
	g.cfg_off = ri.offset;
	g.pcie_cap = find_cap(PCI_CAP_ID_EXP, vf_rd8);
	printf("vfio: %s, group %s, PCIe capability at 0x%x\n", bdf, path, g.pcie_cap);
	bus_master_on();
	g.dma = mmap(NULL, DMA_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (g.dma == MAP_FAILED)
		die("mmap DMA buffer: %s", strerror(errno));
	map_dma(g.dma, DMA_IOVA, DMA_LEN, "buffer");
	g.bar0 = map_bar(0, BAR0_IOVA, VFW_BAR0_SIZE);
	g.bar2 = map_bar(VFW_MSIX_BAR, BAR2_IOVA, VFW_MSIX_BAR_SIZE);
	g.bar4 = map_bar(VFW_DB_BAR, BAR4_IOVA, VFW_DB_BAR_SIZE);
	for (int i = 0; i < VFW_VF_MSIX_VECTORS; i++)
		g.efd[i] = eventfd(0, EFD_NONBLOCK);
	msix_on();
}

/* The PF's BAR0 into the VF's domain: root may mmap sysfs resource0 only if
 * no driver holds the region exclusively (CONFIG_IO_STRICT_DEVMEM). */
static void aim_pf_bar(const char *pf)
{
	char path[256];
	int fd;
	void *p;

	if (!pf) {
		printf("aim pf-bar0: not tried (no -p)\n");
		return;
	}
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/resource0", pf);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0) {
		printf("aim pf-bar0: refused: open %s: %s\n", path, strerror(errno));
		return;
	}
	p = mmap(NULL, VFW_BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		printf("aim pf-bar0: refused: mmap %s: %s\n", path, strerror(errno));
		return;
	}
	map_dma(p, PFBAR_IOVA, VFW_BAR0_SIZE, "PF BAR0");
	g.pf_bar_iova = PFBAR_IOVA;
	printf("aim pf-bar0: mapped at iova 0x%llx\n", PFBAR_IOVA);
}

/* A config space page (ECAM) through /dev/mem. */
static uint64_t ecam_base(void)
{
	FILE *f = fopen("/proc/iomem", "r");
	char line[256];
	unsigned long long a = 0, b;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if ((strstr(line, "MMCONFIG") || strstr(line, "ECAM")) &&
		    sscanf(line, " %llx-%llx", &a, &b) == 2)
			break;
		else
			a = 0;
	fclose(f);
	return a;
}

static uint64_t bdf_off(const char *bdf)
{
	unsigned dom, bus, dev, fn;

	if (sscanf(bdf, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return UINT64_MAX;
	return (uint64_t)bus << 20 | dev << 15 | fn << 12;
}

static uint64_t aim_ecam_one(const char *what, const char *bdf, uint64_t io)
{
	uint64_t base = ecam_base(), off = bdf ? bdf_off(bdf) : UINT64_MAX;
	int fd;
	void *p;

	if (!base || off == UINT64_MAX) {
		printf("aim %s: not tried (%s)\n", what,
		       base ? "no BDF" : "no ECAM range in /proc/iomem (not root?)");
		return 0;
	}
	fd = open("/dev/mem", O_RDWR | O_SYNC);
	if (fd < 0) {
		printf("aim %s: refused: open /dev/mem: %s\n", what, strerror(errno));
		return 0;
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(base + off));
	close(fd);
	if (p == MAP_FAILED) {
		printf("aim %s: refused: mmap /dev/mem at 0x%" PRIx64 " (ECAM 0x%" PRIx64
		       " + 0x%" PRIx64 "): %s\n", what, base + off, base, off, strerror(errno));
		return 0;
	}
	map_dma(p, io, 4096, what);
	printf("aim %s: mapped at iova 0x%" PRIx64 "\n", what, io);
	return io;
}

/* ---- the verbs command queue ------------------------------------------------ */
static void rcq_setup(uint64_t io, uint32_t len, struct vfw_rcmd *ring)
{
	r0w(VFW_REG_RCQ_CTRL, 0);
	r0w(VFW_REG_RCQ_BASE_LO, (uint32_t)io);
	r0w(VFW_REG_RCQ_BASE_HI, (uint32_t)(io >> 32));
	r0w(VFW_REG_RCQ_LEN, len);
	r0w(VFW_REG_RCQ_CTRL, VFW_RCQ_CTRL_ENABLE);
	g.rcq_iova = io;
	g.rcq_len = len ? len : 1;
	g.rcq_tail = 0;
	g.rcq = ring;
}

/* One command: written at the tail, TAIL rung, its DONE waited for (bounded).
 * Returns the status, -1 when it did not complete in time. */
static int cmd(struct vfw_rcmd *c, double secs)
{
	volatile struct vfw_rcmd *slot;
	double end = now() + secs;

	if (!g.rcq)
		return -1;
	slot = &g.rcq[g.rcq_tail % g.rcq_len];
	c->flags = 0;
	c->cookie = ++g.cookie;
	memcpy((void *)slot, c, sizeof(*c));
	__sync_synchronize();
	g.rcq_tail = (g.rcq_tail + 1) % g.rcq_len;
	r0w(VFW_REG_RCQ_TAIL, g.rcq_tail);
	cnt[cur].cmds++;
	while (!(slot->flags & VFW_RCMD_F_DONE)) {
		if (now() > end) {
			cnt[cur].cmd_timeout++;
			return -1;
		}
		usleep(50);
	}
	memcpy(c, (void *)slot, sizeof(*c));
	if (c->flags & VFW_RCMD_F_ERR)
		cnt[cur].cmd_err++;
	else
		cnt[cur].cmd_ok++;
	return c->status;
}

static void eq_setup(uint64_t base, uint32_t len, uint64_t pdata, unsigned vec)
{
	r0w(VFW_REG_REQ_CTRL, 0);
	r0w(VFW_REG_REQ_BASE_LO, (uint32_t)base);
	r0w(VFW_REG_REQ_BASE_HI, (uint32_t)(base >> 32));
	r0w(VFW_REG_REQ_LEN, len);
	r0w(VFW_REG_REQ_PDATA_LO, (uint32_t)pdata);
	r0w(VFW_REG_REQ_PDATA_HI, (uint32_t)(pdata >> 32));
	r0w(VFW_REG_REQ_CTRL, VFW_REQ_CTRL_ENABLE | VFW_REQ_CTRL_IRQ_EN |
			      (vec & 0xff) << VFW_REQ_CTRL_VEC_SHIFT);
}

static void eq_consume(void)
{
	r0w(VFW_REG_REQ_CONS, r32(g.bar0, VFW_REG_REQ_PROD));
}

/* The normal control plane of the function in the program's own memory. */
static void ctl_setup(void)
{
	memset(dmap(OFF_RCQ), 0, 0x30000);
	rcq_setup(iova(OFF_RCQ), 64, dmap(OFF_RCQ));
	eq_setup(iova(OFF_EQ), 64, iova(OFF_PDATA), VFW_MSIX_VEC_RDMA_EQ);
}

static void pgl_fill(uint32_t off, uint32_t n, uint64_t first, uint64_t step)
{
	uint64_t *p = dmap(off);

	for (uint32_t i = 0; i < n; i++)
		p[i] = first + i * step;
}

static struct vfw_pgl_ref pgl_ref(uint32_t off, uint32_t n, uint8_t shift, uint16_t o)
{
	return (struct vfw_pgl_ref){ .pgl_addr = iova(off), .npages = n, .page_shift = shift,
				     .offset = o };
}

static uint32_t pd_alloc(void)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_PD_ALLOC };

	return cmd(&c, 0.05) == 0 ? c.u.pd.pd : rn(8);
}

static uint32_t cq_create(uint32_t depth, struct vfw_pgl_ref pgl, uint16_t dbp)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_CQ_CREATE };

	c.u.cq_create.depth = depth;
	c.u.cq_create.db_page = dbp;
	c.u.cq_create.pgl = pgl;
	return cmd(&c, 0.05) == 0 ? c.u.cq_create.cq : rn(8);
}

static uint32_t qp_create(uint32_t pd, uint32_t scq, uint32_t rcq, uint32_t sqd, uint32_t rqd,
			  struct vfw_pgl_ref sq, struct vfw_pgl_ref rq, uint16_t dbp)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_QP_CREATE };

	c.u.qp_create.pd = pd;
	c.u.qp_create.send_cq = scq;
	c.u.qp_create.recv_cq = rcq;
	c.u.qp_create.sq_depth = sqd;
	c.u.qp_create.rq_depth = rqd;
	c.u.qp_create.ord = 1 + rn(VFW_RDMA_MAX_ORD_IRD);
	c.u.qp_create.ird = 1 + rn(VFW_RDMA_MAX_ORD_IRD);
	c.u.qp_create.db_page = dbp;
	c.u.qp_create.sq = sq;
	c.u.qp_create.rq = rq;
	return cmd(&c, 0.05) == 0 ? c.u.qp_create.qp : rn(8);
}

static uint32_t mr_reg(uint32_t pd, uint32_t acc, uint64_t va, uint64_t len,
		       struct vfw_pgl_ref pgl)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_MR_REG };

	c.u.mr_reg.pd = pd;
	c.u.mr_reg.access = acc;
	c.u.mr_reg.iova = va;
	c.u.mr_reg.len = len;
	c.u.mr_reg.pgl = pgl;
	return cmd(&c, 0.05) == 0 ? c.u.mr_reg.stag : (uint32_t)rnd();
}

static void simple(uint16_t op, uint32_t obj)
{
	struct vfw_rcmd c = { .opcode = op };

	memcpy(c.u.raw, &obj, 4);
	cmd(&c, 0.05);
}

static void qp_modify(uint32_t qp, uint8_t state)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_QP_MODIFY };

	c.u.qp_modify.qp = qp;
	c.u.qp_modify.state = state;
	cmd(&c, 0.05);
}

static void set_addr(void)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_SET_ADDR };

	memcpy(c.u.set_addr.ip, &g.own_ip, 4);
	c.u.set_addr.mtu = 1500;
	cmd(&c, 0.05);
}

/* A WQE with the real layout and fields drawn near their limits. */
static void wqe_fill(struct vfw_wqe *w, uint32_t lkey, uint64_t addr, bool rq)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = rnd();
	if (rn(8) == 0) {            /* raw garbage now and then */
		uint64_t *p = (uint64_t *)w;

		for (unsigned i = 0; i < sizeof(*w) / 8; i++)
			p[i] = rnd();
		return;
	}
	w->num_sge = rn(VFW_RDMA_MAX_SGE + 2);
	for (unsigned i = 0; i < VFW_RDMA_MAX_SGE; i++) {
		w->u.sge[i].addr = addr + rn(8192);
		w->u.sge[i].lkey = rn(4) ? lkey : (uint32_t)rnd();
		w->u.sge[i].len = rn(4) ? 1 + rn(65536) : (uint32_t)rnd();
	}
	if (rq)
		return;
	static const uint8_t ops[] = { VFW_WQE_OP_SEND, VFW_WQE_OP_SEND_INV,
				       VFW_WQE_OP_RDMA_WRITE, VFW_WQE_OP_RDMA_READ, 2, 9 };
	w->opcode = ops[rn(sizeof(ops))];
	w->flags = rn(16);
	if (w->flags & VFW_WQE_F_INLINE)
		w->inline_len = rn(VFW_RDMA_MAX_INLINE + 8);
	w->remote_stag = (uint32_t)rnd();
	w->remote_addr = rnd();
	w->inv_stag = (uint32_t)rnd();
}

/* ---- phases ----------------------------------------------------------------- */

/* Register fuzzing: random writes over BAR0 (biased to the live windows),
 * random doorbells, mailbox requests with random bodies. */
static void phase_regs(double until)
{
	static const uint32_t win[][2] = {
		{ 0x0000, 0x0040 }, { VFW_REGWIN_MBOX, 0x50 }, { VFW_REGWIN_IRQ, 0x40 },
		{ VFW_REGWIN_RING, 0x200 }, { VFW_REGWIN_RDMA_REGS, 0x100 },
		{ 0x0000, VFW_BAR0_SIZE },
	};

	for (int i = 0; i < 4000 && now() < until; i++) {
		uint32_t k = rn(sizeof(win) / sizeof(win[0]));
		uint32_t off = (win[k][0] + rn(win[k][1])) & ~3u;
		uint32_t v = (uint32_t)rnd();

		switch (rn(10)) {
		case 0:
			(void)r32(g.bar0, off);
			cnt[cur].ops++;
			break;
		case 1: {       /* a ring or queue base aimed at an IOVA of interest */
			static const uint64_t io[] = { DMA_IOVA, BAR0_IOVA, BAR2_IOVA,
						       BAR4_IOVA, HOLE_IOVA, 0 };
			r0w(off, (uint32_t)(io[rn(6)] + (rn(64) << 6)));
			break;
		}
		case 2:
			doorbell(rn(VFW_DB_PAGES), rn(4) * 4, v);
			break;
		case 3:          /* a mailbox request */
			for (int w = 0; w < VFW_MBX_MSG_WORDS; w++)
				r0w(VFW_REG_MBX_MSG(w), w == 0 ? 1 + rn(5) : (uint32_t)rnd());
			r0w(VFW_REG_MBX_DOORBELL, 1);
			break;
		case 4:          /* sub-word accesses, ignored by the device */
			*(volatile uint16_t *)(g.bar0 + (off | (rn(2) * 2))) = (uint16_t)v;
			*(volatile uint8_t *)(g.bar0 + off + rn(4)) = (uint8_t)v;
			cnt[cur].ops += 2;
			break;
		default:
			r0w(off, v);
		}
		if ((i & 63) == 63) {
			drain_irqs();
			usleep(200);
		}
	}
	ctl_setup();
}

/* Crafted verbs: a real object sequence with fields at and beyond their
 * limits, WQEs posted and rung, flushes, CM commands, and random commands
 * (a valid opcode with random payload, or anything). */
static void phase_verbs(double until)
{
	for (int it = 0; it < 200 && now() < until; it++) {
		uint32_t pd, cq, cq2, qp, stag, sqd = 1u << (1 + rn(7)), rqd = 1u << (1 + rn(7));
		uint32_t cqd = 1u << (1 + rn(9));
		uint32_t sq_off = OFF_RINGS, rq_off = OFF_RINGS + 0x40000, cq_off = OFF_RINGS + 0x80000;
		uint16_t dbp = rn(VFW_DB_PAGES);

		ctl_setup();
		set_addr();
		pd = pd_alloc();
		/* ring page lists: contiguous pages of the buffer */
		pgl_fill(OFF_PGL, 64, iova(cq_off), 4096);
		cq = cq_create(cqd, pgl_ref(OFF_PGL, (cqd * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE + 4095) / 4096,
					      12, 0), dbp);
		cq2 = cq_create(2 + rn(2) * 65534, pgl_ref(OFF_PGL, 1 + rn(600), 12, rn(2) ? 0 : rn(4096)),
				dbp);
		pgl_fill(OFF_PGL + 0x1000, 64, iova(sq_off), 4096);
		pgl_fill(OFF_PGL + 0x2000, 64, iova(rq_off), 4096);
		qp = qp_create(pd, cq, rn(2) ? cq : cq2, sqd, rqd,
			       pgl_ref(OFF_PGL + 0x1000, (sqd * VFW_WQE_SIZE + 4095) / 4096, 12, 0),
			       pgl_ref(OFF_PGL + 0x2000, (rqd * VFW_WQE_SIZE + 4095) / 4096, 12, 0),
			       dbp);
		pgl_fill(OFF_PGL + 0x3000, 256, iova(OFF_MR), 4096);
		stag = mr_reg(pd, rn(8), 0x7000 + rn(4096), 1 + rn(1 << 20),
			      pgl_ref(OFF_PGL + 0x3000, rn(300), rn(4) ? 12 : 12 + rn(20), 0));
		/* WQEs: fill the SQ and RQ, ring them (from the right page and
		 * others), arm the CQ, then flush to ERROR */
		for (uint32_t i = 0; i < sqd && i < 512; i++)
			wqe_fill((struct vfw_wqe *)dmap(sq_off) + i, stag, 0x7000, false);
		for (uint32_t i = 0; i < rqd && i < 512; i++)
			wqe_fill((struct vfw_wqe *)dmap(rq_off) + i, stag, 0x7000, true);
		cnt[cur].wqes += (sqd < 512 ? sqd : 512) + (rqd < 512 ? rqd : 512);
		doorbell(dbp, VFW_DB_SQ, qp | (rn(4) ? sqd - 1 : rn(65536)) << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_RQ, qp | (rn(4) ? rqd - 1 : rn(65536)) << VFW_DB_PI_SHIFT);
		doorbell(dbp + rn(2), VFW_DB_CQ, cq | VFW_DB_CQ_ARM_NEXT);
		doorbell(rn(VFW_DB_PAGES), rn(3) * 4, (uint32_t)rnd());
		if (rn(2)) {     /* a connection that cannot complete */
			struct vfw_rcmd c = { .opcode = VFW_RCMD_CONNECT };

			c.u.connect.qp = qp;
			memcpy(c.u.connect.lip, &g.own_ip, 4);
			c.u.connect.rip[0] = 10, c.u.connect.rip[1] = 77, c.u.connect.rip[3] = 99;
			c.u.connect.rport = 40000 + rn(1000);
			memset(c.u.connect.dmac, 0xff, 6);
			c.u.connect.ord = c.u.connect.ird = 1;
			c.u.connect.mpa_rev = 1 + rn(3);
			c.u.connect.pdata_len = rn(600);
			c.u.connect.pdata_addr = iova(OFF_MISC);
			c.u.connect.flags = rn(4);
			c.u.connect.tos = rn(256);
			cmd(&c, 0.05);
		}
		{
			struct vfw_rcmd c = { .opcode = VFW_RCMD_LISTEN };

			c.u.listen.port = 1 + rn(65535);
			c.u.listen.backlog = rn(2000);
			if (cmd(&c, 0.05) == 0 && rn(2))
				simple(VFW_RCMD_UNLISTEN, c.u.listen.listener);
		}
		qp_modify(qp, rn(2) ? VFW_QPS_ERROR : rn(6));
		simple(VFW_RCMD_QP_QUERY, qp);
		for (int r = 0; r < 8; r++) {   /* random commands */
			static const uint16_t ops[] = {
				VFW_RCMD_NOP, VFW_RCMD_PD_ALLOC, VFW_RCMD_PD_FREE, VFW_RCMD_MR_REG,
				VFW_RCMD_MR_DEREG, VFW_RCMD_CQ_CREATE, VFW_RCMD_CQ_DESTROY,
				VFW_RCMD_QP_CREATE, VFW_RCMD_QP_MODIFY, VFW_RCMD_QP_DESTROY,
				VFW_RCMD_QP_QUERY, VFW_RCMD_SET_ADDR, VFW_RCMD_LISTEN,
				VFW_RCMD_UNLISTEN, VFW_RCMD_CONNECT, VFW_RCMD_ACCEPT,
				VFW_RCMD_REJECT,
			};
			struct vfw_rcmd c;
			uint64_t *p = (uint64_t *)c.u.raw;

			for (unsigned k = 0; k < sizeof(c.u.raw) / 8; k++)
				p[k] = rn(3) ? rnd() & 0x000000ff000000ffull : rnd();
			c.opcode = rn(8) ? ops[rn(sizeof(ops) / 2)] : (uint16_t)rnd();
			/* ids of live objects: small numbers */
			memcpy(c.u.raw, (uint32_t[]){ rn(8) }, 4);
			if (c.opcode == VFW_RCMD_MR_REG || c.opcode == VFW_RCMD_CQ_CREATE ||
			    c.opcode == VFW_RCMD_QP_CREATE)
				memcpy(c.u.raw + 24, (uint64_t[]){ iova(OFF_PGL) }, 8);
			cmd(&c, 0.02);
		}
		if (rn(3)) {
			simple(VFW_RCMD_QP_DESTROY, qp);
			simple(VFW_RCMD_CQ_DESTROY, cq);
			simple(VFW_RCMD_CQ_DESTROY, cq2);
			simple(VFW_RCMD_MR_DEREG, stag);
			simple(VFW_RCMD_PD_FREE, pd);
		}
		eq_consume();
		drain_irqs();
	}
}

/* Rings aliased and overlapping, sizes at their limits. */
static void phase_alias(double until)
{
	for (int it = 0; it < 100 && now() < until; it++) {
		uint32_t pd, cq, qp, qp2, depth;
		uint32_t shared = OFF_RINGS + rn(16) * 4096;
		uint16_t dbp = 1 + rn(VFW_DB_PAGES - 1);

		ctl_setup();
		pd = pd_alloc();
		switch (rn(5)) {
		case 0:   /* a CQ whose ring is the command ring */
			pgl_fill(OFF_PGL, 8, iova(OFF_RCQ), 4096);
			cq = cq_create(256, pgl_ref(OFF_PGL, 3, 12, 0), dbp);
			break;
		case 1:   /* a CQ of the largest depth on one page, repeated */
			pgl_fill(OFF_PGL, 600, iova(shared), 0);
			cq = cq_create(VFW_RDMA_MAX_CQ_DEPTH,
				       pgl_ref(OFF_PGL, (VFW_RDMA_MAX_CQ_DEPTH * VFW_CQE_SIZE +
							 VFW_CQ_CTRL_SIZE + 4095) / 4096, 12, 0), dbp);
			break;
		case 2:   /* the event ring over the command ring */
			pgl_fill(OFF_PGL, 8, iova(shared), 4096);
			cq = cq_create(64, pgl_ref(OFF_PGL, 1, 12, rn(4096) & ~63u), dbp);
			eq_setup(iova(OFF_RCQ), 16 << rn(9), iova(OFF_RCQ + 64 * rn(8)),
				 VFW_MSIX_VEC_RDMA_EQ);
			break;
		case 3:   /* a page list as long as allowed, and one page too many */
			pgl_fill(OFF_BIGPGL, VFW_RDMA_MAX_MR_PGL, iova(OFF_MR), 0);
			cq = cq_create(64, pgl_ref(OFF_PGL, 1, 12, 0), dbp);
			mr_reg(pd, 7, 0, (uint64_t)VFW_RDMA_MAX_MR_PGL << 12,
			       pgl_ref(OFF_BIGPGL, VFW_RDMA_MAX_MR_PGL + rn(2), 12, 0));
			break;
		default:  /* 1 GiB pages, and a page list that ends at the buffer's end */
			pgl_fill(OFF_PGL, 2, 0x40000000ull, 1ull << 30);
			cq = cq_create(1024, pgl_ref(OFF_PGL, 1, 30, rn(4096)), dbp);
			mr_reg(pd, 7, 0, 3ull << 30, pgl_ref(OFF_PGL, 3, 30, 0));
			mr_reg(pd, 7, 0, 4096, (struct vfw_pgl_ref){
				.pgl_addr = DMA_IOVA + DMA_LEN - 8, .npages = 2, .page_shift = 12 });
			break;
		}
		/* two QPs with SQ and RQ at the same pages as each other and the CQ */
		depth = VFW_RDMA_MAX_QP_DEPTH >> rn(4);
		pgl_fill(OFF_PGL + 0x8000, 2048, iova(shared), rn(2) ? 0 : 4096);
		qp = qp_create(pd, cq, cq, depth, depth,
			       pgl_ref(OFF_PGL + 0x8000, depth * VFW_WQE_SIZE / 4096, 12, 0),
			       pgl_ref(OFF_PGL + 0x8000, depth * VFW_WQE_SIZE / 4096, 12, 0), dbp);
		qp2 = qp_create(pd, cq, cq, 2, 2, pgl_ref(OFF_PGL + 0x8000, 1, 12, 0),
				pgl_ref(OFF_PGL + 0x8000, 1, 12, 128), dbp);
		for (unsigned i = 0; i < 32; i++)
			wqe_fill((struct vfw_wqe *)dmap(shared) + i, rn(1024), iova(OFF_MR), rn(2));
		cnt[cur].wqes += 32;
		doorbell(dbp, VFW_DB_SQ, qp | (depth - 1) << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_RQ, qp | (depth - 1) << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_SQ, qp2 | 1u << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_CQ, cq | VFW_DB_CQ_ARM_NEXT);
		qp_modify(qp, VFW_QPS_ERROR);
		qp_modify(qp2, VFW_QPS_ERROR);
		qp_modify(qp, VFW_QPS_ERROR);          /* drained again */
		/* an Ethernet TX ring and RX ring at the same memory, over the CQ */
		r0w(VFW_REG_TXQ0 + VFW_RING_CTRL, 0);
		r0w(VFW_REG_RXQ0 + VFW_RING_CTRL, 0);
		for (unsigned q = 0; q < 2; q++) {
			uint32_t b = q ? VFW_REG_RXQ0 : VFW_REG_TXQ0;

			r0w(b + VFW_RING_BASE_LO, (uint32_t)iova(shared));
			r0w(b + VFW_RING_BASE_HI, 0);
			r0w(b + VFW_RING_LEN, VFW_RING_MAX_ENTRIES >> rn(10));
			r0w(b + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE | VFW_RING_CTRL_IRQ_EN |
					       rn(10) << VFW_RING_CTRL_VEC_SHIFT);
			r0w(b + VFW_RING_TAIL, rn(VFW_RING_MAX_ENTRIES));
		}
		if (rn(2)) {
			simple(VFW_RCMD_QP_DESTROY, qp);
			simple(VFW_RCMD_QP_DESTROY, qp2);
			simple(VFW_RCMD_CQ_DESTROY, cq);
		}
		eq_consume();
		drain_irqs();
	}
	r0w(VFW_REG_TXQ0 + VFW_RING_CTRL, 0);
	r0w(VFW_REG_RXQ0 + VFW_RING_CTRL, 0);
}

/* An IOVA in a BAR or config space and what a 32-bit write there means. */
struct target { const char *name; uint64_t io; uint32_t data; };

static struct target pick_target(void)
{
	uint32_t qp = rn(4);
	struct target t[] = {
		{ "own RCQ_CTRL", BAR0_IOVA + VFW_REG_RCQ_CTRL, rn(2) },
		{ "own RCQ_TAIL", BAR0_IOVA + VFW_REG_RCQ_TAIL, rn(64) },
		{ "own REQ_CTRL", BAR0_IOVA + VFW_REG_REQ_CTRL, rn(4) | rn(8) << 16 },
		{ "own TXQ0 TAIL", BAR0_IOVA + VFW_REG_TXQ0 + VFW_RING_TAIL, rn(16) },
		{ "own TXQ0 CTRL", BAR0_IOVA + VFW_REG_TXQ0 + VFW_RING_CTRL, (uint32_t)rnd() },
		{ "own MBX_DOORBELL", BAR0_IOVA + VFW_REG_MBX_DOORBELL, 1 },
		{ "own SQ doorbell", BAR4_IOVA + rn(VFW_DB_PAGES) * VFW_DB_PAGE_SIZE + VFW_DB_SQ,
		  qp | rn(64) << VFW_DB_PI_SHIFT },
		{ "own MSI-X table", BAR2_IOVA + 16 * rn(VFW_VF_MSIX_VECTORS) + 4 * rn(4),
		  (uint32_t)rnd() },
		{ "pf-bar0 SCRATCH", g.pf_bar_iova + VFW_REG_SCRATCH, (uint32_t)rnd() },
		/* the VF's own Device Control with Initiate FLR: the class 1 vector */
		{ "own DEVCTL FLR", g.ecam_own_iova + g.pcie_cap + PCI_EXP_DEVCTL,
		  PCI_EXP_DEVCTL_BCR_FLR | 0x2810 },
		/* the PF's command register rewritten with its own value: the config
		 * write path of the PF from a VF's DMA, changing nothing (an FLR of
		 * the PF would take the neighbour's VF with it by design) */
		{ "pf COMMAND", g.ecam_pf_iova + PCI_COMMAND, g.pf_pcie_cap_cmd },
		{ "unmapped", HOLE_IOVA + rn(4096) * 4, 0 },
	};
	unsigned n = sizeof(t) / sizeof(t[0]);

	for (int tries = 0; tries < 32; tries++) {
		struct target x = t[rn(n)];

		/* an aim the kernel refused has IOVA 0 + offset: skip it */
		if (x.io < DMA_IOVA)
			continue;
		return x;
	}
	return t[0];
}

static void forge_msix(unsigned vec, struct target t)
{
	uint32_t off = VFW_MSIX_TABLE_OFFSET + 16 * (vec % VFW_VF_MSIX_VECTORS);

	w32(g.bar2, off + 0, (uint32_t)t.io);
	w32(g.bar2, off + 4, (uint32_t)(t.io >> 32));
	w32(g.bar2, off + 8, t.data);
	w32(g.bar2, off + 12, 0);     /* unmasked */
	cnt[cur].msix_forged++;
}

/* Frames on TX queue 0 (ring and buffers in the program's memory), to make
 * the function raise its TX vector; `n` frames to our own MAC. */
static void tx_frames(unsigned n, unsigned vec, uint64_t buf_io)
{
	struct vfw_tx_desc *d = dmap(OFF_ETH);
	uint8_t *f = dmap(OFF_ETH + 0x10000);

	memcpy(f, g.mac, 6);
	memcpy(f + 6, g.mac, 6);
	f[12] = 0x88, f[13] = 0xb5;
	memset(d, 0, 64 * sizeof(*d));
	for (unsigned i = 0; i < n && i < 63; i++) {
		d[i].addr = buf_io;
		d[i].len = 60;
		d[i].flags = VFW_TXD_EOP;
	}
	r0w(VFW_REG_TXQ0 + VFW_RING_CTRL, 0);
	r0w(VFW_REG_TXQ0 + VFW_RING_BASE_LO, (uint32_t)iova(OFF_ETH));
	r0w(VFW_REG_TXQ0 + VFW_RING_BASE_HI, 0);
	r0w(VFW_REG_TXQ0 + VFW_RING_LEN, 64);
	r0w(VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE | VFW_RING_CTRL_IRQ_EN |
					  vec << VFW_RING_CTRL_VEC_SHIFT);
	r0w(VFW_REG_TXQ0 + VFW_RING_TAIL, n < 63 ? n : 63);
}

/* DMA and MSI-X aimed at BARs and config space. */
static void phase_aim(double until)
{
	for (int it = 0; it < 200 && now() < until; it++) {
		struct target t = pick_target();
		uint32_t pd, cq, qp, stag;
		uint16_t dbp = 1 + rn(VFW_DB_PAGES - 1);

		ctl_setup();
		if (g.msix_on)
			for (unsigned v = 0; v < VFW_VF_MSIX_VECTORS; v++)
				forge_msix(v, v == 0 ? t : pick_target());
		/* interrupts on purpose: a mailbox reply, a TX batch, EQ events */
		r0w(VFW_REG_MBX_CTRL, VFW_MBX_CTRL_IRQ_EN | rn(8) << VFW_MBX_CTRL_VEC_SHIFT);
		r0w(VFW_REG_MBX_MSG(0), VFW_MBX_OP_HELLO);
		r0w(VFW_REG_MBX_MSG(1), it);
		r0w(VFW_REG_MBX_MSG(2), VFW_MBX_API_VERSION);
		r0w(VFW_REG_MBX_DOORBELL, 1);
		tx_frames(1 + rn(8), rn(8), rn(4) ? iova(OFF_ETH + 0x10000) :
			  (rn(2) ? BAR0_IOVA : BAR4_IOVA) + rn(1024) * 4);
		/* objects whose rings / pages are the target (page aligned) */
		pd = pd_alloc();
		pgl_fill(OFF_PGL, 16, t.io & ~4095ull, 0);
		cq = cq_create(1u << (1 + rn(11)), pgl_ref(OFF_PGL, 16, 12, t.io & 4064), dbp);
		pgl_fill(OFF_PGL + 0x1000, 4, iova(OFF_RINGS), 4096);
		qp = qp_create(pd, cq, cq, 16, 16, pgl_ref(OFF_PGL + 0x1000, 1, 12, 0),
			       pgl_ref(rn(2) ? OFF_PGL : OFF_PGL + 0x1000, 1, 12, rn(2) ? 2048 : 0),
			       dbp);
		stag = mr_reg(pd, 7, 0, 8 * 4096, pgl_ref(OFF_PGL, 8, 12, 0));
		for (unsigned i = 0; i < 16; i++)
			wqe_fill((struct vfw_wqe *)dmap(OFF_RINGS) + i, stag, 0, false);
		doorbell(dbp, VFW_DB_CQ, cq | VFW_DB_CQ_ARM_NEXT);
		doorbell(dbp, VFW_DB_SQ, qp | 15u << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_RQ, qp | 15u << VFW_DB_PI_SHIFT);
		qp_modify(qp, VFW_QPS_ERROR);      /* flush CQEs into the target */
		/* the event ring and the command ring based on the target */
		if (rn(2))
			eq_setup(t.io & ~63ull, 16, rn(2) ? 0 : t.io & ~63ull, rn(8));
		if (rn(3) == 0) {
			rcq_setup(t.io & ~63ull, 1 + rn(VFW_RCQ_MAX_LEN), NULL);
			r0w(VFW_REG_RCQ_TAIL, 1 + rn(8));
		}
		usleep(2000);       /* let the device's bottom half run it */
		drain_irqs();
		ctl_setup();
		simple(VFW_RCMD_QP_DESTROY, qp);
		simple(VFW_RCMD_CQ_DESTROY, cq);
		simple(VFW_RCMD_MR_DEREG, stag);
		simple(VFW_RCMD_PD_FREE, pd);
		(void)r32(g.bar0, VFW_REG_MBX_STATUS);
	}
}

/* FLR storms while the function's queues are busy. */
static void phase_flr(double until)
{
	for (int it = 0; it < 40 && now() < until; it++) {
		uint32_t pd, cq, qp;
		uint16_t dbp = 1 + rn(VFW_DB_PAGES - 1);

		ctl_setup();
		pd = pd_alloc();
		pgl_fill(OFF_PGL, 64, iova(OFF_RINGS), 4096);
		cq = cq_create(1024, pgl_ref(OFF_PGL, 9, 12, 0), dbp);
		pgl_fill(OFF_PGL + 0x1000, 128, iova(OFF_RINGS + 0x10000), 4096);
		qp = qp_create(pd, cq, cq, 512, 512, pgl_ref(OFF_PGL + 0x1000, 16, 12, 0),
			       pgl_ref(OFF_PGL + 0x1000, 16, 12, 0), dbp);
		for (unsigned i = 0; i < 512; i++)
			wqe_fill((struct vfw_wqe *)dmap(OFF_RINGS + 0x10000) + i, rn(64), 0, false);
		cnt[cur].wqes += 512;
		/* busy: WQEs rung, a batch of commands queued, frames on TX, an
		 * ERROR drain started; then the reset lands in the middle */
		doorbell(dbp, VFW_DB_SQ, qp | 511u << VFW_DB_PI_SHIFT);
		doorbell(dbp, VFW_DB_RQ, qp | 511u << VFW_DB_PI_SHIFT);
		tx_frames(32, rn(8), iova(OFF_ETH + 0x10000));
		for (unsigned i = 0; i < 32; i++) {
			struct vfw_rcmd *c = &g.rcq[(g.rcq_tail + i) % g.rcq_len];

			memset(c, 0, sizeof(*c));
			c->opcode = i & 1 ? VFW_RCMD_QP_MODIFY : VFW_RCMD_PD_ALLOC;
			c->u.qp_modify.qp = qp;
			c->u.qp_modify.state = VFW_QPS_ERROR;
		}
		__sync_synchronize();
		r0w(VFW_REG_RCQ_TAIL, (g.rcq_tail + 32) % g.rcq_len);
		if (rn(2)) {
			if (ioctl(g.dev, VFIO_DEVICE_RESET) == 0)
				cnt[cur].resets++;
		} else {
			/* Initiate FLR in Device Control through the config region
			 * (vfio-pci turns it into a function reset) */
			uint16_t dc = 0;

			cfg_read(g.pcie_cap + PCI_EXP_DEVCTL, &dc, 2);
			dc |= PCI_EXP_DEVCTL_BCR_FLR;
			if (g.pcie_cap && cfg_write(g.pcie_cap + PCI_EXP_DEVCTL, &dc, 2) == 0)
				cnt[cur].resets++;
		}
		bus_master_on();
		drain_irqs();
	}
}

/* ---- peer: RDMA READs and WRITEs of a real peer into MRs on our BARs ------- */
/*
 * The peer runs rping's server (rdma-core's librdmacm/examples/rping.c): the
 * client SENDs a buffer advertisement {addr, rkey, size} (big endian); the
 * server RDMA READs that buffer, SENDs a go-ahead, the client SENDs a sink
 * advertisement, the server RDMA WRITEs the data there. Our source and sink
 * MRs are pages of our own BAR0, BAR2 and BAR4: the peer's READ makes our
 * device read its own registers, its WRITE makes our device write them.
 */
struct rping_info { uint64_t buf; uint32_t rkey, size; };

static void post_send_inline(uint32_t qp, uint16_t dbp, uint32_t *pi, uint32_t sq_off,
			     uint32_t depth, const void *data, uint32_t len)
{
	struct vfw_wqe *w = (struct vfw_wqe *)dmap(sq_off) + (*pi % depth);

	memset(w, 0, sizeof(*w));
	w->wr_id = *pi;
	w->opcode = VFW_WQE_OP_SEND;
	w->flags = VFW_WQE_F_SIGNALED | VFW_WQE_F_INLINE;
	w->inline_len = len;
	memcpy(w->u.inline_data, data, len);
	__sync_synchronize();
	++*pi;
	doorbell(dbp, VFW_DB_SQ, qp | (*pi & 0xffff) << VFW_DB_PI_SHIFT);
	cnt[cur].wqes++;
}

static bool wait_eqe(uint8_t type, uint32_t *prod_seen, double secs, struct vfw_eqe *out)
{
	double end = now() + secs;
	struct vfw_eqe *eq = dmap(OFF_EQ);

	while (now() < end && time_left()) {
		uint32_t prod = r32(g.bar0, VFW_REG_REQ_PROD);

		for (; *prod_seen != prod; ++*prod_seen) {
			struct vfw_eqe *e = &eq[*prod_seen % 64];

			if (e->type == type) {
				if (out)
					*out = *e;
				++*prod_seen;
				r0w(VFW_REG_REQ_CONS, *prod_seen);
				return true;
			}
		}
		r0w(VFW_REG_REQ_CONS, prod);
		usleep(500);
	}
	return false;
}

static void phase_peer(double until)
{
	static const uint64_t aim_pages[] = { BAR0_IOVA, BAR2_IOVA, BAR4_IOVA, BAR0_IOVA + 0xa000 };

	for (int it = 0; it < 20 && now() < until; it++) {
		uint32_t pd, cq, qp, src, sink, pi = 0, rpi, prod = 0;
		uint32_t sq_off = OFF_RINGS, rq_off = OFF_RINGS + 0x2000, cq_off = OFF_RINGS + 0x4000;
		uint16_t dbp = 1 + rn(VFW_DB_PAGES - 1);
		uint32_t size = 64 + rn(4000) * 4;
		struct vfw_rcmd c = { .opcode = VFW_RCMD_CONNECT };
		struct rping_info info;
		struct vfw_eqe e;

		ctl_setup();
		memset(dmap(OFF_EQ), 0, 64 * VFW_EQE_SIZE);
		set_addr();
		pd = pd_alloc();
		pgl_fill(OFF_PGL, 1, iova(cq_off), 4096);
		cq = cq_create(64, pgl_ref(OFF_PGL, 1, 12, 0), dbp);
		pgl_fill(OFF_PGL + 0x100, 1, iova(sq_off), 4096);
		pgl_fill(OFF_PGL + 0x200, 1, iova(rq_off), 4096);
		qp = qp_create(pd, cq, cq, 16, 16, pgl_ref(OFF_PGL + 0x100, 1, 12, 0),
			       pgl_ref(OFF_PGL + 0x200, 1, 12, 0), dbp);
		/* source and sink MRs: one page each, a BAR page */
		pgl_fill(OFF_PGL + 0x300, 1, aim_pages[rn(4)], 0);
		pgl_fill(OFF_PGL + 0x400, 1, aim_pages[rn(4)], 0);
		src = mr_reg(pd, VFW_MR_ACC_LOCAL_WRITE | VFW_MR_ACC_REMOTE_READ |
			     VFW_MR_ACC_REMOTE_WRITE, 0x100000, 4096, pgl_ref(OFF_PGL + 0x300, 1, 12, 0));
		sink = mr_reg(pd, VFW_MR_ACC_LOCAL_WRITE | VFW_MR_ACC_REMOTE_WRITE |
			      VFW_MR_ACC_REMOTE_READ, 0x200000, 4096,
			      pgl_ref(OFF_PGL + 0x400, 1, 12, 0));
		/* receives for the server's go-ahead messages */
		for (rpi = 0; rpi < 16; rpi++) {
			struct vfw_wqe *w = (struct vfw_wqe *)dmap(rq_off) + rpi;

			memset(w, 0, sizeof(*w));
			w->wr_id = rpi;
			w->num_sge = 1;
			w->u.sge[0].addr = iova(OFF_MISC + rpi * 64);
			w->u.sge[0].lkey = 0;   /* no MR: the device refuses, counted */
			w->u.sge[0].len = 64;
		}
		/* PHYS MR for the receive buffers (the kernel's get_dma_mr) */
		{
			struct vfw_rcmd m = { .opcode = VFW_RCMD_MR_REG };

			m.u.mr_reg.pd = pd;
			m.u.mr_reg.access = VFW_MR_ACC_LOCAL_WRITE;
			m.u.mr_reg.len = DMA_LEN;
			m.u.mr_reg.iova = DMA_IOVA;
			m.u.mr_reg.flags = VFW_MR_F_PHYS;
			if (cmd(&m, 0.05) == 0)
				for (unsigned i = 0; i < 16; i++)
					((struct vfw_wqe *)dmap(rq_off))[i].u.sge[0].lkey =
						m.u.mr_reg.stag;
		}
		__sync_synchronize();
		doorbell(dbp, VFW_DB_RQ, qp | 16u << VFW_DB_PI_SHIFT);
		c.u.connect.qp = qp;
		memcpy(c.u.connect.lip, &g.own_ip, 4);
		memcpy(c.u.connect.rip, &g.peer_ip, 4);
		c.u.connect.rport = 7174;            /* rping's port */
		memcpy(c.u.connect.dmac, g.peer_mac, 6);
		c.u.connect.ord = c.u.connect.ird = 1;
		c.u.connect.mpa_rev = 2;
		c.u.connect.rtr_mask = 1;
		c.u.connect.flags = VFW_CONN_F_P2P;
		cnt[cur].connects++;
		if (cmd(&c, 0.1) != 0 ||
		    !wait_eqe(VFW_EQE_CONNECT_REPLY, &prod, 5, &e) || e.status != VFW_CM_S_OK)
			goto out;
		cnt[cur].established++;
		for (int round = 0; round < 4 && now() < until; round++) {
			info = (struct rping_info){ .buf = htobe64(0x100000), .rkey = htobe32(src),
						    .size = htobe32(size) };
			post_send_inline(qp, dbp, &pi, sq_off, 16, &info, sizeof(info));
			usleep(20000);       /* the server READs, then SENDs go-ahead */
			info = (struct rping_info){ .buf = htobe64(0x200000 + rn(64) * 4),
						    .rkey = htobe32(sink), .size = htobe32(size) };
			post_send_inline(qp, dbp, &pi, sq_off, 16, &info, sizeof(info));
			usleep(20000);       /* the server WRITEs into our BAR page */
			drain_irqs();
		}
out:
		qp_modify(qp, VFW_QPS_ERROR);
		usleep(5000);
		simple(VFW_RCMD_QP_DESTROY, qp);
		simple(VFW_RCMD_CQ_DESTROY, cq);
		simple(VFW_RCMD_MR_DEREG, src);
		simple(VFW_RCMD_MR_DEREG, sink);
		simple(VFW_RCMD_PD_FREE, pd);
	}
}

/* ---- probes: does an aim land? ------------------------------------------ */
/*
 * Evidence, not assumption, of where the device's own interrupts and DMA go
 * when aimed at its BARs through the IOMMU. The MSI-X table (BAR2) is
 * QEMU's own PCI code, so a write that reaches it changes it: it shows the
 * path works. BAR0 registers belong to the adapter, whose entry guard
 * refuses a BAR write from inside its own work (docs/security.md): a write
 * aimed there must not land. A DMA read of BAR0 returns the registers: a
 * page list read from BAR0 holds MAGIC/VERSION, not page addresses, and the
 * command fails as INVAL (2), not DMA (7).
 */
static uint32_t msix_word(unsigned vec, unsigned word)
{
	return r32(g.bar2, VFW_MSIX_TABLE_OFFSET + 16 * vec + 4 * word);
}

static void probe_msix(const char *what, uint64_t io, uint32_t want, bool table)
{
	uint32_t got = 0;
	double end;

	if (!g.msix_on)
		return;
	w32(g.bar0, VFW_REG_SCRATCH, 0);
	forge_msix(1, (struct target){ what, io, want });
	r0w(VFW_REG_MBX_CTRL, VFW_MBX_CTRL_IRQ_EN | 1u << VFW_MBX_CTRL_VEC_SHIFT);
	r0w(VFW_REG_MBX_MSG(0), VFW_MBX_OP_HELLO);
	r0w(VFW_REG_MBX_MSG(2), VFW_MBX_API_VERSION);
	r0w(VFW_REG_MBX_DOORBELL, 1);
	for (end = now() + 3; now() < end; usleep(1000)) {
		got = table ? msix_word(2, 2) : r32(g.bar0, VFW_REG_SCRATCH);
		if (got == want)
			break;
	}
	printf("probe msix->%s: a mailbox reply's MSI-X aimed there wrote 0x%08x, it reads "
	       "0x%08x: %s\n", what, want, got, got == want ? "landed" : "did not land");
	r0w(VFW_REG_MBX_CTRL, 0);
}

/* A flush CQE on a CQ whose ring is `page` at byte `off` (a multiple of
 * 64); `word` reads what it would change (preset to a sentinel first). */
static void probe_cqe(const char *what, uint64_t page, uint16_t off,
		      volatile uint8_t *bar, uint32_t word)
{
	uint32_t pd, cq, qp, got = 0, sentinel = 0xdeadbeef, err0;
	uint32_t wr = 0xc9e00000u | rn(0x10000);
	struct vfw_wqe *w = (struct vfw_wqe *)dmap(OFF_RINGS + 0x1000);
	double end;

	ctl_setup();
	err0 = cnt[cur].cmd_err;
	w32(bar, word, sentinel);
	sentinel = r32(bar, word);
	pd = pd_alloc();
	pgl_fill(OFF_PGL, 1, page, 0);
	cq = cq_create(2, pgl_ref(OFF_PGL, 1, 12, off), 1);
	pgl_fill(OFF_PGL + 0x100, 2, iova(OFF_RINGS), 4096);
	qp = qp_create(pd, cq, cq, 2, 2, pgl_ref(OFF_PGL + 0x100, 1, 12, 0),
		       pgl_ref(OFF_PGL + 0x108, 1, 12, 0), 1);
	memset(w, 0, sizeof(*w));
	w->wr_id = wr;
	__sync_synchronize();
	doorbell(1, VFW_DB_RQ, qp | 1u << VFW_DB_PI_SHIFT);
	qp_modify(qp, VFW_QPS_ERROR);
	for (end = now() + 3; now() < end && (got = r32(bar, word)) == sentinel;)
		usleep(1000);
	printf("probe cqe->%s: a flush CQE (wr_id 0x%08x) on a CQ ring there (%" PRIu64
	       " commands failed), it reads 0x%08x (was 0x%08x): %s\n", what, wr,
	       cnt[cur].cmd_err - err0, got, sentinel, got != sentinel ? "landed" : "did not land");
	simple(VFW_RCMD_QP_DESTROY, qp);
	simple(VFW_RCMD_CQ_DESTROY, cq);
	simple(VFW_RCMD_PD_FREE, pd);
}

static void probe_aims(void)
{
	struct vfw_rcmd c = { .opcode = VFW_RCMD_MR_REG };
	int st;

	probe_msix("own-msix-table", BAR2_IOVA + 16 * 2 + 8, 0x5ca10000u | rn(0x10000), true);
	probe_msix("own-bar0 SCRATCH", BAR0_IOVA + VFW_REG_SCRATCH, 0x5ca20000u | rn(0x10000),
		   false);
	/* CQE 0 at byte 64: its wr_id over vector 4's address; at byte 0 of
	 * BAR0: its inv_stag (0) over SCRATCH (0x10) */
	probe_cqe("own-msix-table", BAR2_IOVA, 64, g.bar2, VFW_MSIX_TABLE_OFFSET + 16 * 4);
	probe_cqe("own-bar0 SCRATCH", BAR0_IOVA, 0, g.bar0, VFW_REG_SCRATCH);
	ctl_setup();
	c.u.mr_reg.pd = pd_alloc();
	c.u.mr_reg.access = VFW_MR_ACC_LOCAL_WRITE;
	c.u.mr_reg.len = 4096;
	c.u.mr_reg.pgl = (struct vfw_pgl_ref){ .pgl_addr = BAR0_IOVA, .npages = 1,
					       .page_shift = 12 };
	st = cmd(&c, 0.1);
	printf("probe pgl<-own-bar0: MR_REG with its page list read from BAR0 (MAGIC, VERSION): "
	       "status %d (%s)\n", st, st == VFW_RCMD_S_INVAL ? "INVAL: the read reached the "
	       "registers" : st == VFW_RCMD_S_DMA ? "DMA: the read failed" : "other");
	ctl_setup();
}

/* ---- main ----------------------------------------------------------------- */
static void usage(void)
{
	fprintf(stderr, "usage: vfw_hostile VF_BDF SECS SEED [-p PF_BDF] [-a OWN_IP] "
			"[-c PEER_IP,PEER_MAC] [-o PHASE,...]\n");
	exit(2);
}

static void read_pf_command(const char *pf)
{
	char path[256];
	uint16_t v = 0;
	int fd;

	if (!pf)
		return;
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/config", pf);
	fd = open(path, O_RDONLY);
	if (fd >= 0 && pread(fd, &v, 2, PCI_COMMAND) == 2)
		g.pf_pcie_cap_cmd = v;
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	typedef void (*phase_fn)(double);
	static const phase_fn fn[P_N] = { phase_regs, phase_verbs, phase_alias, phase_aim,
					  phase_flr, phase_peer };
	const char *bdf, *pf = NULL;
	double secs, slice = 1.5, t0;
	bool only[P_N];
	bool some = false;
	uint32_t m;
	int opt;

	if (argc < 4)
		usage();
	bdf = argv[1];
	secs = atof(argv[2]);
	g.rng = strtoull(argv[3], NULL, 0) * 0x2545F4914F6CDD1Dull + 1;
	g.own_ip = inet_addr("10.77.0.12");
	optind = 4;
	memset(only, 0, sizeof(only));
	while ((opt = getopt(argc, argv, "p:a:c:o:")) != -1) {
		switch (opt) {
		case 'o':
			for (int p = 0; p < P_N; p++)
				if (strstr(optarg, pname[p]))
					only[p] = some = true;
			if (!some)
				usage();
			break;
		case 'p': pf = optarg; break;
		case 'a': g.own_ip = inet_addr(optarg); break;
		case 'c': {
			char ip[32];
			unsigned mc[6];

			if (sscanf(optarg, "%31[0-9.],%x:%x:%x:%x:%x:%x", ip, &mc[0], &mc[1], &mc[2],
				   &mc[3], &mc[4], &mc[5]) != 7)
				usage();
			g.peer_ip = inet_addr(ip);
			for (int i = 0; i < 6; i++)
				g.peer_mac[i] = mc[i];
			g.have_peer = true;
			break;
		}
		default: usage();
		}
	}
	if (secs <= 0 || secs > 3600)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGBUS, on_sigbus);
	vfio_open(bdf);
	aim_pf_bar(pf);
	read_pf_command(pf);
	g.ecam_own_iova = aim_ecam_one("ecam-own", bdf, ECAM_IOVA);
	g.ecam_pf_iova = aim_ecam_one("ecam-pf", pf, ECAM_IOVA + 0x1000);
	if (!g.have_peer)
		printf("aim peer: not tried (no -c)\n");
	if (r32(g.bar0, VFW_REG_MAGIC) != VFW_MAGIC)
		die("BAR0 magic 0x%08x, not a vfwarp function", r32(g.bar0, VFW_REG_MAGIC));
	m = r32(g.bar0, VFW_REG_DP_MAC_LO);
	memcpy(g.mac, &m, 4);
	m = r32(g.bar0, VFW_REG_DP_MAC_HI);
	memcpy(g.mac + 4, &m, 2);
	printf("function 0x%08x, MAC %02x:%02x:%02x:%02x:%02x:%02x, rdma caps 0x%x\n",
	       r32(g.bar0, VFW_REG_FUNC_INFO), g.mac[0], g.mac[1], g.mac[2], g.mac[3], g.mac[4],
	       g.mac[5], r32(g.bar0, VFW_REG_RDMA_CAPS));
	ctl_setup();
	probe_aims();
	t0 = now();
	g.end = t0 + secs;
	printf("storm started: %.0f s, seed %s\n", secs, argv[3]);
	while (time_left()) {
		for (cur = 0; cur < P_N && time_left(); cur++) {
			double until = now() + slice;

			if ((cur == P_PEER && !g.have_peer) || (some && !only[cur]))
				continue;
			if (until > g.end)
				until = g.end;
			cnt[cur].slices++;
			bus_armed = 1;
			if (sigsetjmp(bus_jmp, 1)) {
				cnt[cur].sigbus++;
				bus_master_on();
			} else {
				fn[cur](until);
			}
			bus_armed = 0;
		}
	}
	/* leave the function quiet: queues off (the close resets it too) */
	cur = P_REGS;
	r0w(VFW_REG_RCQ_CTRL, 0);
	r0w(VFW_REG_REQ_CTRL, 0);
	r0w(VFW_REG_TXQ0 + VFW_RING_CTRL, 0);
	r0w(VFW_REG_RXQ0 + VFW_RING_CTRL, 0);
	for (int p = 0; p < P_N; p++)
		printf("phase %-5s slices %" PRIu64 " ops %" PRIu64 " cmds %" PRIu64 " (ok %" PRIu64
		       " err %" PRIu64 " timeout %" PRIu64 ") wqes %" PRIu64 " doorbells %" PRIu64
		       " msix_forged %" PRIu64 " irqs %" PRIu64 " resets %" PRIu64 " connects %"
		       PRIu64 " established %" PRIu64 " sigbus %" PRIu64 "\n",
		       pname[p], cnt[p].slices, cnt[p].ops, cnt[p].cmds, cnt[p].cmd_ok,
		       cnt[p].cmd_err, cnt[p].cmd_timeout, cnt[p].wqes, cnt[p].doorbells,
		       cnt[p].msix_forged, cnt[p].irqs, cnt[p].resets, cnt[p].connects,
		       cnt[p].established, cnt[p].sigbus);
	printf("storm done: %.1f s\n", now() - t0);
	return 0;
}
