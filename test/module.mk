# SPDX-License-Identifier: BSD-3-Clause
# test/: MPI test programs for the trace (and replay) suites. They are plain
# MPI programs, built without any tnbc flag or library.

TRACE_TEST_PROGS := $(addprefix $(BUILD)/test/trace/,access_order io_and_reuse crash_after access_order_f \
                      access_order_f08)

$(BUILD)/test/trace/%: test/trace/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

$(BUILD)/test/trace/%: test/trace/%.f90
	@mkdir -p $(dir $@)
	$(MPIFC) -O2 -g -J $(dir $@) -o $@ $<

ALL_TARGETS  += $(TRACE_TEST_PROGS)
CHECK_SUITES += trace

.PHONY: check-trace
check-trace: $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(BUILD)/bench/ordinary
	@BUILD=$(BUILD) test/trace.sh

REPLAY_TEST_PROGS := $(BUILD)/test/replay/integrity $(BUILD)/test/replay/irecv_spy.so $(BUILD)/test/replay/auto_user $(BUILD)/test/replay/auto_phases $(BUILD)/test/replay/auto_between

$(BUILD)/test/replay/irecv_spy.so: test/replay/irecv_spy.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -fPIC -shared -o $@ $< -ldl

$(BUILD)/test/replay/%: test/replay/%.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

ALL_TARGETS  += $(REPLAY_TEST_PROGS)
CHECK_SUITES += replay

# tnbc auto: learning, deciding and going early in one run (test/auto.sh).
CHECK_SUITES += auto
.PHONY: check-auto
check-auto: $(REPLAY_TEST_PROGS) $(REPLAY_LIB) $(ANALYZER_BIN)
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=asan BUILD=build-asan build-asan/lib/libtnbc-replay.so > /dev/null
	@BUILD=$(BUILD) BUILD_ASAN=build-asan test/auto.sh

.PHONY: check-replay
check-replay: $(REPLAY_TEST_PROGS) $(REPLAY_UNIT_BINS) $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN) $(BUILD)/bench/bcastread
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=tsan BUILD=build-tsan build-tsan/lib/libtnbc-replay.so > /dev/null
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=asan BUILD=build-asan build-asan/lib/libtnbc-replay.so > /dev/null
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
check-fidelity: $(TRACE_TEST_PROGS) $(TRACE_LIB) $(REPLAY_LIB) $(MERGE_BIN) $(ANALYZER_BIN) $(BUILD)/bench/ordinary
	@BUILD=$(BUILD) test/fidelity.sh

# test/comm/: programs of the communicator suite (sub-communicators, freed
# communicators, inter-communicators), plain MPI.
COMM_TEST_PROGS := $(addprefix $(BUILD)/test/comm/,comm_fft comm_free comm_kinds inplace scatter redscat dtypes dtypes_ops alltoallw neighbor comm_fft_f08)

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
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=tsan BUILD=build-tsan build-tsan/lib/libtnbc-replay.so > /dev/null
	@BUILD=$(BUILD) BUILD_TSAN=build-tsan test/comm.sh

# Torture suite (test/torture.sh): legal programs doing unusual things with
# buffers after a collective returned; plain, trace, tuned, forced on.
TORTURE_PROGS := $(patsubst test/torture/%.c,$(BUILD)/test/torture/%,$(wildcard test/torture/*.c)) \
                 $(patsubst test/torture/%.f90,$(BUILD)/test/torture/%,$(wildcard test/torture/*.f90))

$(BUILD)/test/torture/%: test/torture/%.c test/torture/tt.h
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -pthread \
	    $(if $(filter fortify_%,$(notdir $@)),-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2) \
	    $(if $(filter openmp_%,$(notdir $@)),-fopenmp) \
	    $(if $(filter nopie_%,$(notdir $@)),-fno-pie -no-pie) -o $@ $< -lm

$(BUILD)/test/torture/%: test/torture/%.f90
	@mkdir -p $(dir $@)
	$(MPIFC) -O2 -g -J $(dir $@) -o $@ $<

ALL_TARGETS  += $(TORTURE_PROGS)
CHECK_SUITES += torture

.PHONY: check-torture
check-torture: $(TORTURE_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
	@BUILD=$(BUILD) test/torture.sh

# The trace, replay, analyzer (its MPI part, the e2e tests) and torture
# suites against MPICH as well (docs/mpich.md): the same scripts on build-mpich/ (built here,
# `make MPI=mpich`), launched with mpiexec.mpich (test/lib.sh, T_MPI=mpich).
# The replay suite runs the selection MPICH_REPLAY_ONLY, to keep make check short.
MPICH_SUITE_trace    := test/trace.sh
MPICH_SUITE_replay   := test/replay.sh
MPICH_SUITE_analyzer := T_ONLY='^e2e' bash analyzer/test/run.sh
MPICH_SUITE_torture  := test/torture.sh
CHECK_SUITES += trace-mpich replay-mpich analyzer-mpich torture-mpich

.PHONY: check-trace-mpich check-replay-mpich check-analyzer-mpich check-torture-mpich \
        mpich-deps-trace mpich-deps-replay mpich-deps-analyzer mpich-deps-torture
check-trace-mpich check-replay-mpich check-analyzer-mpich check-torture-mpich: check-%-mpich:
	@if ! command -v mpicc.mpich > /dev/null || ! command -v mpiexec.mpich > /dev/null; then \
	    echo "  skip $*-mpich: MPICH is not installed (Debian: mpich, libmpich-dev)"; \
	    echo "$*-mpich: 0 passed, 0 failed, 1 skipped"; \
	else \
	    $(MAKE) --no-print-directory $(SUBMAKE_J) MPI=mpich mpich-deps-$* && \
	    BUILD=build-mpich T_MPI=mpich T_SUITE=$*-mpich $(MPICH_SUITE_$*); \
	fi

# Expanded in the MPI=mpich sub-make, so under build-mpich/.
mpich-deps-trace: $(TRACE_TEST_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(BUILD)/bench/ordinary
mpich-deps-replay: $(REPLAY_TEST_PROGS) $(REPLAY_UNIT_BINS) $(REPLAY_CHECK_PROGS) $(TRACE_TEST_PROGS) \
                   $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
mpich-deps-torture: $(TORTURE_PROGS) $(TRACE_LIB) $(MERGE_BIN) $(REPLAY_LIB) $(ANALYZER_BIN)
mpich-deps-analyzer: $(ANALYZER_BIN) $(BUILD)/lib/libtnbc-trace.so $(BUILD)/bin/tnbc-merge \
                     $(BUILD)/test/trace/access_order $(REPLAY_LIB)
