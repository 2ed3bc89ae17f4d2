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

REPLAY_TEST_PROGS := $(BUILD)/test/replay/integrity $(BUILD)/test/replay/irecv_spy.so

$(BUILD)/test/replay/irecv_spy.so: test/replay/irecv_spy.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -shared -o $@ $< -ldl

$(BUILD)/test/replay/%: test/replay/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

ALL_TARGETS  += $(REPLAY_TEST_PROGS)
CHECK_SUITES += replay

.PHONY: check-replay
check-replay: $(REPLAY_TEST_PROGS) $(REPLAY_UNIT_BINS) $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
	@$(MAKE) --no-print-directory SAN=tsan build-tsan/lib/libtnbc-replay.so > /dev/null
	@$(MAKE) --no-print-directory SAN=asan build-asan/lib/libtnbc-replay.so > /dev/null
	@BUILD=$(BUILD) BUILD_TSAN=build-tsan BUILD_ASAN=build-asan test/replay.sh

CHECK_SUITES += testlib

.PHONY: check-testlib
check-testlib:
	@BUILD=$(BUILD) test/lib_selftest.sh

# The mutation check (not part of `make check`): deliberate bugs, one at a
# time in a scratch copy, each of which some suite must catch.
.PHONY: check-mutants
check-mutants: all
	@BUILD=$(BUILD) scripts/check-mutants

# Trace fidelity: the analyzer's RCRC/TCURC against what bench/ordinary
# measures itself, and the confidence of a heavily single-stepped trace.
CHECK_SUITES += fidelity

.PHONY: check-fidelity
check-fidelity: $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(ANALYZER_BIN) $(BUILD)/bench/ordinary
	@BUILD=$(BUILD) test/fidelity.sh

# test/comm/: programs of the communicator suite (sub-communicators, freed
# communicators, inter-communicators), plain MPI.
COMM_TEST_PROGS := $(addprefix $(BUILD)/test/comm/,comm_fft comm_free comm_kinds inplace scatter redscat dtypes alltoallw neighbor comm_fft_f08)

$(BUILD)/test/comm/%: test/comm/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

$(BUILD)/test/comm/%: test/comm/%.f90
	@mkdir -p $(dir $@)
	$(MPIFC) -O2 -g -J $(dir $@) -o $@ $<

ALL_TARGETS  += $(COMM_TEST_PROGS)
CHECK_SUITES += comm

.PHONY: check-comm
check-comm: $(COMM_TEST_PROGS) $(BUILD)/bench/pencil $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
	@$(MAKE) --no-print-directory SAN=tsan build-tsan/lib/libtnbc-replay.so > /dev/null
	@BUILD=$(BUILD) BUILD_TSAN=build-tsan test/comm.sh

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
