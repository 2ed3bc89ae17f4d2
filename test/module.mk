# test/: MPI test programs for the trace (and replay) suites. They are plain
# MPI programs, built without any tnbc flag or library.

TRACE_TEST_PROGS := $(addprefix $(BUILD)/test/trace/,access_order io_and_reuse crash_after access_order_f)

$(BUILD)/test/trace/%: test/trace/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

$(BUILD)/test/trace/%: test/trace/%.f90
	@mkdir -p $(dir $@)
	$(MPIFC) -O2 -g -J $(dir $@) -o $@ $<

ALL_TARGETS  += $(TRACE_TEST_PROGS)
CHECK_SUITES += trace

.PHONY: check-trace
check-trace: $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN)
	@BUILD=$(BUILD) test/trace.sh

REPLAY_TEST_PROGS := $(BUILD)/test/replay/integrity

$(BUILD)/test/replay/%: test/replay/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

ALL_TARGETS  += $(REPLAY_TEST_PROGS)
CHECK_SUITES += replay

.PHONY: check-replay
check-replay: $(REPLAY_TEST_PROGS) $(REPLAY_UNIT_BINS) $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
	@$(MAKE) --no-print-directory SAN=tsan build-tsan/lib/libtnbc-replay.so > /dev/null
	@BUILD=$(BUILD) BUILD_TSAN=build-tsan test/replay.sh

# Torture suite (test/torture.sh): legal programs doing unusual things with
# buffers after a collective returned; plain, trace, tuned, forced on.
TORTURE_PROGS := $(patsubst test/torture/%.c,$(BUILD)/test/torture/%,$(wildcard test/torture/*.c))

$(BUILD)/test/torture/%: test/torture/%.c test/torture/tt.h
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -pthread -o $@ $< -lm

ALL_TARGETS  += $(TORTURE_PROGS)
CHECK_SUITES += torture

.PHONY: check-torture
check-torture: $(TORTURE_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
	@BUILD=$(BUILD) test/torture.sh
