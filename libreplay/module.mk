# SPDX-License-Identifier: BSD-3-Clause
# libreplay/: libtnbc-replay.so (LD_PRELOAD), profile-driven early return.

REPLAY_LIB  := $(BUILD)/lib/libtnbc-replay.so
REPLAY_OBJS := $(call objs,,libreplay/replay.c libreplay/nbop.c libreplay/pool.c libreplay/plan_source.c libreplay/plan_chunked.c libreplay/plan_chain.c libreplay/send_guard.c libreplay/tokens.c libreplay/progress.c libreplay/land.c libreplay/pieces.c libreplay/phases.c libreplay/comms.c libreplay/inplace.c libreplay/activity.c libreplay/identity.c libreplay/land_typed.c libreplay/autotune.c libreplay/yield.c)

$(REPLAY_OBJS): CFLAGS += -Iprofiles -Ianalyzer -Ilibreplay -fvisibility=hidden $(if $(SAN),-DTNBC_TEST_HOOKS)

# TNBC_AUTO decides with the analyzer's own code (everything but its main).
REPLAY_ANALYZER_OBJS = $(filter-out %/main.o,$(ANALYZER_OBJS))

# Only the interposed symbols are exported: the MPI entry points and the
# libc calls the objects define (scripts/gen-exports writes the list).
$(BUILD)/lib/libtnbc-replay.map: $(CORE_BASE_OBJS) $(CORE_WRAP_OBJS) $(REPLAY_OBJS) $(REPLAY_ANALYZER_OBJS) scripts/gen-exports
	@mkdir -p $(dir $@)
	scripts/gen-exports $@ $(filter %.o,$^)

$(REPLAY_LIB): $(CORE_BASE_OBJS) $(CORE_WRAP_OBJS) $(REPLAY_OBJS) $(REPLAY_ANALYZER_OBJS) $(BUILD)/lib/libtnbc-profile.a $(BUILD)/lib/libtnbc-replay.map
	@mkdir -p $(dir $@)
	$(MPICC) -shared -o $@ $(filter-out %.map,$^) $(LDFLAGS) -Wl,--version-script=$(BUILD)/lib/libtnbc-replay.map $(CORE_LIBS) -lm

ALL_TARGETS += $(REPLAY_LIB)

# Unit test of the piece cut (cmocka), run by test/replay.sh.
REPLAY_UNIT_BINS := $(BUILD)/test/replay/test_pieces $(BUILD)/test/replay/test_land \
                    $(BUILD)/test/replay/test_pool $(BUILD)/test/replay/test_yield

$(BUILD)/test/replay/test_pieces: test/replay/test_pieces.c $(BUILD)/libreplay/pieces.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ilibreplay -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lcmocka

$(BUILD)/test/replay/test_land: test/replay/test_land.c $(BUILD)/libreplay/land.o $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Ilibreplay -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lcmocka -lm $(CORE_LIBS)

$(BUILD)/test/replay/test_pool: test/replay/test_pool.c $(BUILD)/libreplay/pool.o $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -Ilibreplay -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lcmocka -lm $(CORE_LIBS)

$(BUILD)/test/replay/test_yield: test/replay/test_yield.c $(BUILD)/libreplay/yield.o
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Ilibreplay -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lcmocka

ALL_TARGETS += $(REPLAY_UNIT_BINS)

# The whole-workflow benchmark: plain / MPI-3 / trace / tuned on an
# emulated cluster, and predicted against measured overlap.
BENCH_SUITES += tnbc
.PHONY: bench-tnbc
bench-tnbc: $(REPLAY_LIB) $(TRACE_LIB) $(MERGE_BIN) $(ANALYZER_BIN) $(BENCH_BINS)
	@BUILD=$(BUILD) bench/tnbc-bench.sh

# tnbc auto against plain, MPI-3 and the three-step workflow, 64 calls
# per site (docs/bench.md).
BENCH_SUITES += auto
.PHONY: bench-auto
bench-auto: $(REPLAY_LIB) $(TRACE_LIB) $(MERGE_BIN) $(ANALYZER_BIN) $(BENCH_BINS)
	@BUILD=$(BUILD) bench/auto-bench.sh

# No cost when off: plain against an all-off profile, paired (issue 16).
BENCH_SUITES += off
.PHONY: bench-off
bench-off: $(REPLAY_LIB) $(TRACE_LIB) $(MERGE_BIN) $(ANALYZER_BIN) $(BENCH_BINS)
	@BUILD=$(BUILD) bench/off-cost.sh

# Costs of the runtime's choices: landing through /proc/self/mem, and the
# pass-through overhead with no profile.
REPLAY_BENCH_BINS := $(BUILD)/libreplay/bench/land_cost $(BUILD)/libreplay/bench/coll_loop

$(BUILD)/libreplay/bench/land_cost: $(BUILD)/libreplay/bench/land_cost.o $(BUILD)/libreplay/land.o $(CORE_BASE_OBJS)
	$(MPICC) -o $@ $^ $(LDFLAGS) -lm $(CORE_LIBS)

$(BUILD)/libreplay/bench/land_cost.o: CFLAGS += -Ilibreplay

$(BUILD)/libreplay/bench/coll_loop: $(BUILD)/libreplay/bench/coll_loop.o
	$(MPICC) -o $@ $^ $(LDFLAGS)

ALL_TARGETS  += $(REPLAY_BENCH_BINS)
BENCH_SUITES += replay
.PHONY: bench-replay
bench-replay: $(REPLAY_BENCH_BINS) $(REPLAY_LIB)
	@BUILD=$(BUILD) libreplay/bench/replay_costs.sh

# Test programs of issue 16's checks in test/replay.sh (built by test/module.mk's
# pattern rule for test/replay/%.c).
REPLAY_CHECK_PROGS := $(BUILD)/test/replay/thread_level $(BUILD)/test/replay/own_symbols $(BUILD)/test/replay/bcast_two_sites \
                      $(BUILD)/test/replay/allreduce_loop $(BUILD)/test/replay/release_calls
ALL_TARGETS += $(REPLAY_CHECK_PROGS)
check-replay: $(REPLAY_CHECK_PROGS)

# Exports its land/progress_submit/nbop_create (-rdynamic), as a program
# whose own symbols the library must not take or replace.
$(BUILD)/test/replay/own_symbols: test/replay/own_symbols.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -rdynamic -o $@ $<

# check_lsan preloads the AddressSanitizer build of the library.
.PHONY: replay-asan-lib
replay-asan-lib:
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=asan BUILD=build-asan build-asan/lib/libtnbc-replay.so > /dev/null
check-replay: replay-asan-lib
