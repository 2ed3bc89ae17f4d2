# SPDX-License-Identifier: BSD-3-Clause
# core/: mechanisms shared by libtnbc-trace and libtnbc-replay.
# CORE_BASE_OBJS have no interposed symbols (unit tests link them directly);
# CORE_WRAP_OBJS define the MPI/libc symbols and need a mode's tnbc_mode_*.

CORE_BASE_SRCS := core/clock.c core/config.c core/callsite.c core/collective.c \
                  core/range_index.c core/guard.c core/guard_keys.c core/guard_memory.c core/tracedb.c core/runinfo.c \
                  core/comm_shape.c core/dtype.c core/typemap.c core/altstack.c core/crowding.c \
                  core/entry_patch.c
# The release wrappers generated from mpi.h (scripts/gen-release-mpi): Open
# MPI's are committed (core/wrap_release_gen.c, checked current by
# test/replay.sh); an MPICH build generates its own from MPICH's header,
# which has MPI-4's functions (MPI_Isendrecv, the _c forms, persistent and
# partitioned calls) that Open MPI 4.1's lacks.
CORE_WRAP_SRCS := core/intercept.c core/wrap_collectives.c core/wrap_release_mpi.c \
                  $(if $(filter mpich,$(MPI)),,core/wrap_release_gen.c) \
                  core/wrap_libc.c core/wrap_fortran.c core/wrap_alltoallw.c \
                  core/wrap_neighbor.c core/wrap_windows.c
CORE_BASE_OBJS := $(call objs,,$(CORE_BASE_SRCS)) $(BUILD)/core/tracedb_schema.o
# Sanitizer builds: test hooks (TNBC_TEST_FAIL_MPROTECT, core/guard.c).
$(BUILD)/core/guard.o: CFLAGS += $(if $(SAN),-DTNBC_TEST_HOOKS)
CORE_WRAP_OBJS := $(call objs,,$(CORE_WRAP_SRCS)) \
                  $(if $(filter mpich,$(MPI)),$(BUILD)/core/wrap_release_gen_mpich.o)

$(BUILD)/core/wrap_release_gen_mpich.c: scripts/gen-release-mpi $(filter-out core/wrap_release_gen.c,$(CORE_WRAP_SRCS))
	@mkdir -p $(dir $@)
	$(PY) scripts/gen-release-mpi --mpi mpich -o $@

$(BUILD)/core/wrap_release_gen_mpich.o: $(BUILD)/core/wrap_release_gen_mpich.c
	$(MPICC) $(CFLAGS) -c $< -o $@
CORE_LIBS      := -lsqlite3 -ldl

# The schema DDL, embedded as a C string so the libraries need no data file.
$(BUILD)/core/tracedb_schema.c: core/tracedb_schema.sql
	@mkdir -p $(dir $@)
	{ echo 'const char tnbc_schema_sql[] ='; \
	  sed 's/\\/\\\\/g; s/"/\\"/g; s/.*/"&\\n"/' $<; echo ';'; } > $@

$(BUILD)/core/tracedb_schema.o: $(BUILD)/core/tracedb_schema.c
	$(CC) $(CFLAGS) -c $< -o $@

# Unit tests (cmocka).
CORE_TESTS := $(patsubst test/core/test_%.c,%,$(wildcard test/core/test_*.c))
CORE_TEST_BINS := $(addprefix $(BUILD)/test/core/test_,$(CORE_TESTS))

# Compiled and linked in one step, so -MMD's .d names the headers as
# prerequisites of the binary: only the sources and objects go to the
# compiler (a header there is compiled on its own, and MPICH's fail).
$(BUILD)/test/core/test_%: test/core/test_%.c $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) -lcmocka $(CORE_LIBS)

ALL_TARGETS  += $(CORE_TEST_BINS)
CHECK_SUITES += core

.PHONY: check-core
check-core: $(CORE_TEST_BINS)
	@BUILD=$(BUILD) test/core.sh

# Trace-overhead benchmark (numbers in docs/trace.md): an Alltoall loop run
# plain and under LD_PRELOAD of libtnbc-trace.so. (The library's path is
# spelled out: libtrace/module.mk is read after this file.)
TRACE_BENCH_BIN := $(BUILD)/bench/trace/a2a_read

$(TRACE_BENCH_BIN): bench/trace/a2a_read.c
	@mkdir -p $(dir $@)
	$(MPICC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $<

# The guard's fault and single-step costs, measured in one process.
TRACE_STEP_BIN := $(BUILD)/bench/trace/step_cost

$(TRACE_STEP_BIN): bench/trace/step_cost.c $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(CORE_LIBS)

# What checking unseen memory costs, per range and by the whole map.
MAPS_QUERY_BIN := $(BUILD)/bench/trace/maps_query

$(MAPS_QUERY_BIN): bench/trace/maps_query.c $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $(filter %.c %.o,$^) $(LDFLAGS) $(CORE_LIBS)

ALL_TARGETS  += $(TRACE_BENCH_BIN) $(TRACE_STEP_BIN) $(MAPS_QUERY_BIN)
BENCH_SUITES += trace

.PHONY: bench-trace
bench-trace: $(TRACE_BENCH_BIN) $(TRACE_STEP_BIN) $(BUILD)/lib/libtnbc-trace.so $(BUILD)/bin/tnbc-merge
	@BUILD=$(BUILD) bench/trace/run.sh
