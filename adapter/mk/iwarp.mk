# mk/iwarp.mk - the iWARP engine's extra targets (see docs/adapter-iwarp.md):
#   capture-check   tshark dissection of a captured engine run
#   bench-iwarp     JSON benchmark -> ../bench/results/adapter-iwarp.json
#   interop-iwarp   engine on a tap in a netns vs a Linux-socket peer (root)
IWARP_TSHARK := $(shell command -v tshark 2>/dev/null)
IWARP_BENCH_JSON := $(TOP)/bench/results/adapter-iwarp.json

.PHONY: capture-check capture-check-skip bench-iwarp interop-iwarp

capture-check: $(O)/t/test_iwarp_tcp
	@tools/iwarp_capture_check.sh $(O)/t/test_iwarp_tcp $(O)/iwarp-capture.pcap

capture-check-skip:
	@echo "capture-check: SKIP (tshark not installed; run tools/install-deps adapter)"

ifneq ($(IWARP_TSHARK),)
TEST_EXTRA += capture-check
else
TEST_EXTRA += capture-check-skip
endif

$(O)/b/iwarp_bench: bench/iwarp_bench.c $(wildcard tests/*.h include/*.h) $(O)/libvfwadapter.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isrc -Itests $(CFLAGS_B) -Wno-missing-prototypes $< $(O)/libvfwadapter.a -o $@

bench-iwarp: $(O)/b/iwarp_bench
	@mkdir -p $(dir $(IWARP_BENCH_JSON))
	timeout 600 $(O)/b/iwarp_bench $(IWARP_BENCH_JSON) "make -C adapter bench" \
	  "$$(git -C $(TOP) rev-parse --short HEAD 2>/dev/null || echo unknown)"
	@echo "wrote $(IWARP_BENCH_JSON)"
BENCH_EXTRA += bench-iwarp

$(O)/b/iwarp_interop: tools/iwarp_interop.c tools/tapdev.c $(wildcard tools/*.h include/*.h tests/*.h) $(O)/libvfwadapter.a
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -Isrc -Itests -Itools $(CFLAGS_B) tools/iwarp_interop.c tools/tapdev.c $(O)/libvfwadapter.a -o $@

interop-iwarp: $(O)/b/iwarp_interop
	@tools/iwarp_interop.sh $(O)/b/iwarp_interop

CLEAN_EXTRA += $(O)/iwarp-capture.pcap
