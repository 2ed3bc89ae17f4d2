# SPDX-License-Identifier: BSD-3-Clause
# tnbc: trace-and-tune toolchain and runtime for MPI collectives.
#
#   make          build everything (-Wall -Wextra -Werror)
#   make deps     install missing Debian packages (needs root)
#   make check    run every test suite (prints one summary line at the end)
#   make demo     the whole workflow on an emulated cluster
#   make bench    the long measurements (results under $(BUILD)/bench and docs/)
#   make fuzz     every libFuzzer target for FUZZ_TIME seconds (mk/fuzz.mk)
#   make install  PREFIX=/usr/local [DESTDIR=staging] (scripts/install-tree)
#
# Each component adds itself through a module.mk fragment: it appends to
# ALL_TARGETS, CHECK_SUITES (name N => target check-N) and BENCH_SUITES
# (name N => target bench-N). One concern per fragment; none edits another.

include mk/config.mk
include mk/fuzz.mk

ALL_TARGETS  :=
CHECK_SUITES :=
BENCH_SUITES :=

.DEFAULT_GOAL := all

MODULES := $(sort $(wildcard */module.mk libcomm/*/module.mk))
include $(MODULES)

.PHONY: all deps check bench demo clean check-san fuzz install
all: $(ALL_TARGETS)

fuzz: $(FUZZ_TARGETS)

deps:
	@scripts/deps.sh

# check: every suite, each bounded in time, one summary line at the end.
check: deps
	@$(MAKE) --no-print-directory $(SUBMAKE_J) all
	@scripts/check-all $(CHECK_SUITES)

bench: deps
	@$(MAKE) --no-print-directory $(SUBMAKE_J) all
	@scripts/bench-all $(BENCH_SUITES)

# install: the conventional layout under $(DESTDIR)$(PREFIX); the installed
# tnbc finds its tools and libraries relative to itself.
PREFIX ?= /usr/local
install: all
	@PREFIX=$(PREFIX) DESTDIR=$(DESTDIR) BUILD=$(BUILD) scripts/install-tree

clean:
	rm -rf build build-asan build-ubsan build-tsan

# Generic compile rule: mpicc (wrapping gcc) so any source may include mpi.h.
$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(MPICC) $(CFLAGS) -c $< -o $@

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)

# The demo shows the workflow, not the compiler: the build goes to a log.
demo: deps
	@mkdir -p $(BUILD)
	@echo "[demo] building (log: $(BUILD)/demo-build.log)"
	@$(MAKE) --no-print-directory $(SUBMAKE_J) all > $(BUILD)/demo-build.log 2>&1 || \
		{ tail -n 30 $(BUILD)/demo-build.log; exit 1; }
	@BUILD=$(BUILD) scripts/demo.sh
