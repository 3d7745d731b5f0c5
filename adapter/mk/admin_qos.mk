# mk/admin_qos.mk - fuzz_admin_qos without coverage feedback from the switch's
# port tables (see fuzz/fuzz_admin_qos.nocov): its own copies of switch.o and
# fdb.o, compiled with the ignore list and linked ahead of the fuzz library,
# whose members of the same name are then never pulled in. (A target-specific
# flag would leak into the shared fuzz library when this target built it.)
AQ_NOCOV_OBJS := $(O)/vsw-fz-nocov/switch.o $(O)/vsw-fz-nocov/fdb.o
$(O)/vsw-fz-nocov/%.o: $(TOP)/vswitch/src/%.c $(wildcard $(TOP)/vswitch/src/*.h $(TOP)/vswitch/include/*.h) fuzz/fuzz_admin_qos.nocov
	@mkdir -p $(@D)
	$(CLANG) $(VSW_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	  -fsanitize-coverage-ignorelist=fuzz/fuzz_admin_qos.nocov -c $< -o $@
$(O)/f/fuzz_admin_qos: fuzz/fuzz_admin_qos.c $(HDRS) $(wildcard fuzz/*.h) $(AQ_NOCOV_OBJS) $(O)/libvfwadapter-fuzz.a
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -Isrc $(CSTD) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $< \
	  $(AQ_NOCOV_OBJS) $(O)/libvfwadapter-fuzz.a -o $@
