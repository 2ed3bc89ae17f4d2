# SPDX-License-Identifier: BSD-3-Clause
# PDBP: pipe dynamic buffer pool over MPI (libcomm/pdbp).
#   make all          builds $(BUILD)/lib/libpdbp.a and the test/bench programs
#   make check-pdbp   unit tests (protocol, pool) and MPI tests on 2-4 ranks
#   make bench-pdbp   throughput and pool-memory benchmarks, plots in docs/pdbp/

PDBP_DIR  := libcomm/pdbp
PDBP_SRCS := $(addprefix $(PDBP_DIR)/,proto.c pool.c cfg.c dev_host.c xfer.c pipe.c mnode.c rt.c api.c)
PDBP_OBJS := $(call objs,,$(PDBP_SRCS))
PDBP_LIB  := $(BUILD)/lib/libpdbp.a
PDBP_BIN  := $(BUILD)/pdbp

PDBP_TESTS := $(PDBP_BIN)/test_proto $(PDBP_BIN)/test_pool $(PDBP_BIN)/mpi_pdbp

ALL_TARGETS  += $(PDBP_LIB) $(PDBP_TESTS) $(PDBP_BIN)/pdbp_bench
CHECK_SUITES += pdbp
BENCH_SUITES += pdbp

$(PDBP_LIB): $(PDBP_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@; ar rcs $@ $^

$(PDBP_BIN)/test_%: $(BUILD)/$(PDBP_DIR)/test/test_%.o $(PDBP_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lcmocka -lm

$(PDBP_BIN)/mpi_pdbp: $(BUILD)/$(PDBP_DIR)/test/mpi_pdbp.o $(PDBP_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

# CUDA device back end: only when nvcc exists (it is not a Debian package
# here); the suite reports the CUDA test as skipped otherwise.
PDBP_NVCC := $(firstword $(wildcard /usr/local/cuda/bin/nvcc) $(shell command -v nvcc 2>/dev/null))
ifneq ($(PDBP_NVCC),)
PDBP_CUDA_HOME := $(patsubst %/bin/nvcc,%,$(PDBP_NVCC))
PDBP_CUDA_LIB  := $(BUILD)/lib/libpdbp-cuda.a
ALL_TARGETS    += $(PDBP_CUDA_LIB) $(PDBP_BIN)/dev_cuda_check

$(BUILD)/$(PDBP_DIR)/dev_cuda.o: $(PDBP_DIR)/dev_cuda.cu $(PDBP_DIR)/dev.h
	@mkdir -p $(dir $@)
	$(PDBP_NVCC) -O2 -Xcompiler -fPIC -c $< -o $@

$(PDBP_CUDA_LIB): $(BUILD)/$(PDBP_DIR)/dev_cuda.o
	@mkdir -p $(dir $@)
	rm -f $@; ar rcs $@ $^

$(PDBP_BIN)/dev_cuda_check: $(BUILD)/$(PDBP_DIR)/test/dev_cuda_check.o $(PDBP_CUDA_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@ -L$(PDBP_CUDA_HOME)/lib64 -Wl,-rpath,$(PDBP_CUDA_HOME)/lib64 -lcudart -lstdc++
endif

$(PDBP_BIN)/pdbp_bench: $(BUILD)/$(PDBP_DIR)/bench/pdbp_bench.o $(PDBP_LIB)
	@mkdir -p $(dir $@)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

# MESP's receive side under libFuzzer (mk/fuzz.mk): `make fuzz-pdbp`.
$(eval $(call fuzz_target,pdbp,$(PDBP_DIR)/fuzz/fuzz_msg.c $(PDBP_DIR)/proto.c $(PDBP_DIR)/proto.h,-I$(PDBP_DIR),$(PDBP_DIR)/fuzz/seeds,))

.PHONY: check-pdbp bench-pdbp
check-pdbp: $(PDBP_LIB) $(PDBP_TESTS)
	@BUILD=$(BUILD) PDBP_BIN=$(PDBP_BIN) bash $(PDBP_DIR)/test/pdbp.sh

bench-pdbp: $(PDBP_BIN)/pdbp_bench
	@BUILD=$(BUILD) PY=$(PY) bash $(PDBP_DIR)/bench/run.sh
