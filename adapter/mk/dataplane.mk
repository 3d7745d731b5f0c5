# mk/dataplane.mk - the Ethernet data path (src/eth/) forwards through
# the embedded switch, so the adapter's libraries carry vswitch/'s objects
# (compiled here from vswitch/src with its own language level) and every
# adapter source sees vswitch/include; the fuzz library carries them too,
# built with the fuzz targets' instrumentation.
VSW_DIR      := $(TOP)/vswitch
VSW_SRCS     := $(wildcard $(VSW_DIR)/src/*.c)
VSW_HDRS     := $(wildcard $(VSW_DIR)/src/*.h $(VSW_DIR)/include/*.h)
VSW_CFLAGS   := -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra \
                -I$(VSW_DIR)/include -I$(VSW_DIR)/src
VSW_SAN_OBJS := $(patsubst $(VSW_DIR)/src/%.c,$(O)/vsw-san/%.o,$(VSW_SRCS))
VSW_OPT_OBJS := $(patsubst $(VSW_DIR)/src/%.c,$(O)/vsw-opt/%.o,$(VSW_SRCS))
VSW_FZ_OBJS  := $(patsubst $(VSW_DIR)/src/%.c,$(O)/vsw-fz/%.o,$(VSW_SRCS))

CPPFLAGS += -I$(VSW_DIR)/include

$(O)/vsw-san/%.o: $(VSW_DIR)/src/%.c $(VSW_HDRS)
	@mkdir -p $(@D)
	$(CC) $(VSW_CFLAGS) -O1 -g $(SAN) -c $< -o $@
$(O)/vsw-opt/%.o: $(VSW_DIR)/src/%.c $(VSW_HDRS)
	@mkdir -p $(@D)
	$(CC) $(VSW_CFLAGS) -O2 -g -DNDEBUG -c $< -o $@

$(O)/vsw-fz/%.o: $(VSW_DIR)/src/%.c $(VSW_HDRS)
	@mkdir -p $(@D)
	$(CLANG) $(VSW_CFLAGS) -O1 -g -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

$(O)/libvfwadapter-san.a: $(VSW_SAN_OBJS)
$(O)/libvfwadapter.a: $(VSW_OPT_OBJS)
$(O)/libvfwadapter-fuzz.a: $(VSW_FZ_OBJS)
