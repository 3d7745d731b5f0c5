# mk/esw_rules.mk - fuzz_esw_rules without coverage feedback from the
# switch's port tables either: an eswitch mode change re-derives every
# port's VLAN membership (vsw_port_set), which instrumented was ~45% of the
# run time (perf). It links the same uncovered switch.o and fdb.o as
# fuzz_admin_qos (mk/admin_qos.mk); the rule table (rule_table.c), which
# the commands exercise, stays instrumented.
$(O)/f/fuzz_esw_rules: fuzz/fuzz_esw_rules.c $(HDRS) $(wildcard fuzz/*.h) $(AQ_NOCOV_OBJS) $(O)/libvfwadapter-fuzz.a
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS) -Isrc $(CSTD) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) $< \
	  $(AQ_NOCOV_OBJS) $(O)/libvfwadapter-fuzz.a -o $@
