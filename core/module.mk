# core/: mechanisms shared by libtnbc-trace and libtnbc-replay.
# CORE_BASE_OBJS have no interposed symbols (unit tests link them directly);
# CORE_WRAP_OBJS define the MPI/libc symbols and need a mode's tnbc_mode_*.

CORE_BASE_SRCS := core/clock.c core/config.c core/callsite.c core/collective.c \
                  core/range_index.c core/guard.c core/tracedb.c core/runinfo.c
CORE_WRAP_SRCS := core/intercept.c core/wrap_collectives.c core/wrap_release_mpi.c \
                  core/wrap_libc.c core/wrap_fortran.c
CORE_BASE_OBJS := $(call objs,,$(CORE_BASE_SRCS)) $(BUILD)/core/tracedb_schema.o
CORE_WRAP_OBJS := $(call objs,,$(CORE_WRAP_SRCS))
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

$(BUILD)/test/core/test_%: test/core/test_%.c $(CORE_BASE_OBJS)
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -o $@ $^ $(LDFLAGS) -lcmocka $(CORE_LIBS)

ALL_TARGETS  += $(CORE_TEST_BINS)
CHECK_SUITES += core

.PHONY: check-core
check-core: $(CORE_TEST_BINS)
	@BUILD=$(BUILD) test/core.sh
