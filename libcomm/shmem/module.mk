# SPDX-License-Identifier: BSD-3-Clause
# libcomm/shmem: tnbc-shmem, OpenSHMEM over MPI-3 with the design's extensions.
#
#   build/lib/libtnbc-shmem.{so,a}   the library
#   build/bin/tnbc-oshcc, tnbc-oshrun, build/lib/pkgconfig/tnbc-shmem.pc
#   make check-shmem                 multi-PE tests (libcomm/shmem/test/run.sh)
#   make bench-shmem                 benchmarks (libcomm/shmem/bench/run.sh)

SHMEM_DIR   := libcomm/shmem
SHMEM_INC   := $(SHMEM_DIR)/include
SHMEM_SRCS  := $(wildcard $(SHMEM_DIR)/src/*.c)
SHMEM_OBJS  := $(call objs,,$(SHMEM_SRCS))
# the same objects with pshmem_ twins (pshmem-alias.sh): the libraries use these
SHMEM_POBJS := $(patsubst $(BUILD)/$(SHMEM_DIR)/src/%.o,$(BUILD)/shmem/prof/%.o,$(SHMEM_OBJS))
SHMEM_SO    := $(BUILD)/lib/libtnbc-shmem.so
SHMEM_A     := $(BUILD)/lib/libtnbc-shmem.a
SHMEM_ABS   := $(abspath .)
SHMEM_TOOLS := $(BUILD)/bin/tnbc-oshcc $(BUILD)/bin/tnbc-oshrun \
               $(BUILD)/lib/pkgconfig/tnbc-shmem.pc

SHMEM_TEST_SRCS  := $(wildcard $(SHMEM_DIR)/test/*.c)
SHMEM_TEST_BINS  := $(patsubst $(SHMEM_DIR)/test/%.c,$(BUILD)/shmem/test/%,$(SHMEM_TEST_SRCS))
SHMEM_BENCH_SRCS := $(wildcard $(SHMEM_DIR)/bench/*.c)
SHMEM_BENCH_BINS := $(patsubst $(SHMEM_DIR)/bench/%.c,$(BUILD)/shmem/bench/%,$(SHMEM_BENCH_SRCS))

# profiling interface: a wrapping tool, preloaded or linked statically
SHMEM_PTOOL      := $(BUILD)/shmem/test/libptool.so $(BUILD)/shmem/test/t_pshmem_static

ALL_TARGETS  += $(SHMEM_SO) $(SHMEM_A) $(SHMEM_TOOLS) $(SHMEM_TEST_BINS) $(SHMEM_BENCH_BINS) \
                $(SHMEM_PTOOL)
CHECK_SUITES += shmem
BENCH_SUITES += shmem

$(SHMEM_OBJS) $(patsubst %,%.o,$(SHMEM_TEST_BINS) $(SHMEM_BENCH_BINS)) \
    $(BUILD)/shmem/test/ptool.o: CFLAGS += -I$(SHMEM_INC)

$(BUILD)/shmem/prof/%.o: $(BUILD)/$(SHMEM_DIR)/src/%.o $(SHMEM_DIR)/src/pshmem-alias.sh
	@mkdir -p $(dir $@)
	$(SHMEM_DIR)/src/pshmem-alias.sh $< $@

# exports.map: only shmem_*/shmemx_*, their pshmem_ twins and the old names
# leave the library.
$(SHMEM_SO): $(SHMEM_POBJS) $(SHMEM_DIR)/src/exports.map
	@mkdir -p $(dir $@)
	$(MPICC) -shared -o $@ $(SHMEM_POBJS) $(LDFLAGS) -Wl,--version-script=$(SHMEM_DIR)/src/exports.map -ldl

$(SHMEM_A): $(SHMEM_POBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Tests and benchmarks link the shared library, as tnbc-oshcc does.
$(BUILD)/shmem/test/%.o: $(SHMEM_DIR)/test/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@
$(BUILD)/shmem/bench/%.o: $(SHMEM_DIR)/bench/%.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@
$(BUILD)/shmem/test/%: $(BUILD)/shmem/test/%.o $(SHMEM_SO)
	$(MPICC) -o $@ $< $(LDFLAGS) -L$(BUILD)/lib -Wl,-rpath,$(SHMEM_ABS)/$(BUILD)/lib -ltnbc-shmem -lm
$(BUILD)/shmem/bench/%: $(BUILD)/shmem/bench/%.o $(SHMEM_SO)
	$(MPICC) -o $@ $< $(LDFLAGS) -L$(BUILD)/lib -Wl,-rpath,$(SHMEM_ABS)/$(BUILD)/lib -ltnbc-shmem -lm

$(BUILD)/shmem/test/ptool.o: $(SHMEM_DIR)/test/tool/ptool.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@
$(BUILD)/shmem/test/libptool.so: $(BUILD)/shmem/test/ptool.o $(SHMEM_SO)
	$(MPICC) -shared -o $@ $< $(LDFLAGS) -L$(BUILD)/lib -Wl,-rpath,$(SHMEM_ABS)/$(BUILD)/lib -ltnbc-shmem
# the tool's strong shmem_int_put beside the archive's weak one: no clash
$(BUILD)/shmem/test/t_pshmem_static: $(BUILD)/shmem/test/t_pshmem.o $(BUILD)/shmem/test/ptool.o $(SHMEM_A)
	$(MPICC) -o $@ $^ $(LDFLAGS) -ldl -lm

SHMEM_SUBST = sed -e 's|@INCDIR@|$(SHMEM_ABS)/$(SHMEM_INC)|g' \
                  -e 's|@LIBDIR@|$(SHMEM_ABS)/$(BUILD)/lib|g' -e 's|@PREFIX@|$(SHMEM_ABS)/$(BUILD)|g' \
                  -e 's|@SANFLAGS@|$(SANFLAGS)|g'
$(BUILD)/bin/tnbc-osh%: $(SHMEM_DIR)/bin/tnbc-osh%.in
	@mkdir -p $(dir $@)
	$(SHMEM_SUBST) $< > $@ && chmod +x $@
$(BUILD)/lib/pkgconfig/tnbc-shmem.pc: $(SHMEM_DIR)/bin/tnbc-shmem.pc.in
	@mkdir -p $(dir $@)
	$(SHMEM_SUBST) $< > $@

.PHONY: check-shmem bench-shmem
check-shmem: $(SHMEM_SO) $(SHMEM_TOOLS) $(SHMEM_TEST_BINS) $(SHMEM_PTOOL)
	@BUILD=$(BUILD) $(SHMEM_DIR)/test/run.sh
bench-shmem: $(SHMEM_SO) $(SHMEM_TOOLS) $(SHMEM_BENCH_BINS)
	@BUILD=$(BUILD) $(SHMEM_DIR)/bench/run.sh
