# SPDX-License-Identifier: BSD-3-Clause
# libtrace/: libtnbc-trace.so (LD_PRELOAD) and tnbc-merge.

TRACE_LIB  := $(BUILD)/lib/libtnbc-trace.so
TRACE_OBJS := $(call objs,,libtrace/trace.c libtrace/event_ring.c)
MERGE_BIN  := $(BUILD)/bin/tnbc-merge

# Exports: as the replay library's (scripts/gen-exports).
$(BUILD)/lib/libtnbc-trace.map: $(CORE_BASE_OBJS) $(CORE_WRAP_OBJS) $(TRACE_OBJS) scripts/gen-exports
	@mkdir -p $(dir $@)
	scripts/gen-exports $@ $(filter %.o,$^)

$(TRACE_LIB): $(CORE_BASE_OBJS) $(CORE_WRAP_OBJS) $(TRACE_OBJS) $(BUILD)/lib/libtnbc-trace.map
	@mkdir -p $(dir $@)
	$(MPICC) -shared -o $@ $(filter-out %.map,$^) $(LDFLAGS) -Wl,--version-script=$(BUILD)/lib/libtnbc-trace.map $(CORE_LIBS)

$(MERGE_BIN): $(call objs,,libtrace/merge.c) $(BUILD)/core/tracedb_schema.o
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDFLAGS) -lsqlite3

ALL_TARGETS += $(TRACE_LIB) $(MERGE_BIN)
