# mk/admin_qos.mk - fuzz_admin_qos: see fuzz/fuzz_admin_qos.nocov.
$(O)/f/fuzz_admin_qos: CPPFLAGS += -fsanitize-coverage-ignorelist=fuzz/fuzz_admin_qos.nocov
$(O)/f/fuzz_admin_qos: fuzz/fuzz_admin_qos.nocov
