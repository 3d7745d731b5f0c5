# mk/tcp.mk - targets of the offloaded TCP stack (owner: adapter/tcp).
#   make -C adapter interop-tcp   Linux interop over a TAP in a private netns
#                                 (root; skips cleanly otherwise)
#   make -C adapter bench-tcp     bench/results/adapter-tcp.json
#   make -C adapter spike-tcp     lwIP vs vfw_tcp spike (docs/adapter-tcp.md)
TCP_TOOLS_CFLAGS := $(CSTD) $(WARN) -O2 -g
BENCH_TCP_MB     ?= 256
BENCH_TCP_REPS   ?= 5
SPIKE_MB         ?= 64
TCP_TOOLS_CPP    := $(CPPFLAGS) -Isrc -Itests -Itools

.PHONY: interop-tcp bench-tcp spike-tcp tcp-tools

$(O)/tools/tap_interop: tools/tap_interop.c tools/tapdev.c tools/tapdev.h \
		$(O)/libvfwadapter-san.a
	@mkdir -p $(@D)
	$(CC) $(TCP_TOOLS_CPP) $(CFLAGS_T) tools/tap_interop.c tools/tapdev.c \
		$(O)/libvfwadapter-san.a -o $@

interop-tcp: $(O)/tools/tap_interop
	tools/tap_interop_test.sh $(abspath $(O)/tools/tap_interop) $(abspath $(O)/interop)

$(O)/tools/bench_tcp: tools/bench_tcp.c tests/simwire.h $(O)/libvfwadapter.a
	@mkdir -p $(@D)
	$(CC) $(TCP_TOOLS_CPP) $(TCP_TOOLS_CFLAGS) -DNDEBUG tools/bench_tcp.c \
		$(O)/libvfwadapter.a -o $@

bench-tcp: $(O)/tools/bench_tcp
	@mkdir -p $(TOP)/bench/results
	$(O)/tools/bench_tcp $(TOP)/bench/results/adapter-tcp.json $(BENCH_TCP_MB) $(BENCH_TCP_REPS)

# The spike links Debian's liblwip (liblwip-dev) for comparison only; the
# library itself never depends on lwIP. lwIP headers need gnu11 and its own
# warning profile, so the spike is not built with $(WARN).
$(O)/tools/spike_lwip: tools/spike_lwip.c tests/simwire.h $(O)/libvfwadapter.a
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -DNDEBUG -Iinclude -Itests -I/usr/include/lwip \
		tools/spike_lwip.c $(O)/libvfwadapter.a -llwip -o $@

spike-tcp: $(O)/tools/spike_lwip
	$(O)/tools/spike_lwip $(SPIKE_MB)

tcp-tools: $(O)/tools/tap_interop $(O)/tools/bench_tcp $(O)/tools/spike_lwip

BENCH_EXTRA += bench-tcp
CLEAN_EXTRA += $(O)/interop
