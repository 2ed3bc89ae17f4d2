# SPDX-License-Identifier: BSD-3-Clause
# bench/: the benchmark applications (plain MPI programs, no knowledge of
# tnbc) and the driver that runs them in several modes (bench/run-apps).

BENCH_APPS := microbench fft3d isort bcastread ordinary pencil pingpong
BENCH_BINS := $(addprefix $(BUILD)/bench/,$(BENCH_APPS)) $(BUILD)/bench/alltoall_f
BENCH_UTIL := $(BUILD)/bench/bench_util.o

ALL_TARGETS  += $(BENCH_BINS)
CHECK_SUITES += apps
BENCH_SUITES += apps

$(addprefix $(BUILD)/bench/,$(BENCH_APPS)): $(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_UTIL)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

# Fortran variant for the trace tests (`use mpi`); mpifort wraps gfortran.
$(BUILD)/bench/alltoall_f: bench/alltoall_f.f90
	@mkdir -p $(dir $@)
	$(MPIFC) -O2 -Wall -Werror $(SANFLAGS) -J $(dir $@) $< -o $@

.PHONY: check-apps bench-apps
check-apps: $(BENCH_BINS)
	@BUILD=$(BUILD) test/apps.sh

bench-apps: $(BENCH_BINS)
	@BUILD=$(BUILD) bench/bench-apps.sh

# The emulated cluster's suite lives here too: scripts/cluster/ has no
# fragment of its own (the top-level Makefile includes only */module.mk).
CHECK_SUITES += cluster
.PHONY: check-cluster
check-cluster: $(BENCH_BINS) $(BUILD)/test/comm/dtypes
	@BUILD=$(BUILD) test/cluster.sh
