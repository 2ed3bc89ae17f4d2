# SPDX-License-Identifier: BSD-3-Clause
# DLMC: kernel module (kmod/dlmc), user library, tools, applications, tests.
#
#   make dlmc-kmod     build kmod/dlmc/dlmc.ko against Debian's 6.1 headers
#                      (extracted under build/kmod by mk/deps.d/dlmc.sh)
#   make check-dlmc    unit tests on the host + module tests in the VM bench
#   make bench-dlmc    DLMC vs TCP vs Open MPI TCP BTL in the VM (docs/dlmc.md)

DLMC_DIR   := libcomm/dlmc
DLMC_OUT   := $(BUILD)/$(DLMC_DIR)
DLMC_KOUT  := $(BUILD)/kmod/dlmc
DLMC_KO    := $(DLMC_KOUT)/dlmc.ko
DLMC_KSRC  := $(wildcard kmod/dlmc/*.c kmod/dlmc/*.h) kmod/dlmc/Kbuild

DLMC_LIB   := $(DLMC_OUT)/libtnbc-dlmc.a
DLMC_LSRC  := $(DLMC_DIR)/dlmc.c $(DLMC_DIR)/chan.c
DLMC_TOOLS := $(DLMC_OUT)/dlmc_tool $(DLMC_OUT)/dlmc_bad $(DLMC_OUT)/dlmc_raw \
              $(DLMC_OUT)/dlmc_bench
DLMC_APPS  := $(DLMC_OUT)/dlmc_pi $(DLMC_OUT)/dlmc_tridiag $(DLMC_OUT)/dlmc_pingpong
DLMC_UNIT  := $(DLMC_OUT)/test_dlmc_proto

ALL_TARGETS  += $(DLMC_LIB) $(DLMC_TOOLS) $(DLMC_APPS) $(DLMC_UNIT) dlmc-kmod
CHECK_SUITES += dlmc
BENCH_SUITES += dlmc

# Frame decoding and the windows, as the module runs them, under libFuzzer
# (mk/fuzz.mk): `make fuzz-dlmc`.
$(eval $(call fuzz_target,dlmc,$(DLMC_DIR)/fuzz/fuzz_frame.c kmod/dlmc/dlmc_proto.h,,$(DLMC_DIR)/fuzz/seeds,))

# The kernel's own style checker, from Debian's linux-source-6.1 (not a
# dependency of `make check`: 140 MB): CHECKPATCH=path/to/checkpatch.pl.
# PREFER_DEFINED_ATTRIBUTE_MACRO is ignored for dlmc_proto.h's one line that defines __packed
# for user space, which has no such macro.
CHECKPATCH ?= scripts/checkpatch.pl
.PHONY: checkpatch-dlmc
checkpatch-dlmc:
	@test -f $(CHECKPATCH) || { echo "checkpatch-dlmc: no $(CHECKPATCH); see docs/dlmc.md (Kernel style)"; exit 1; }
	perl $(CHECKPATCH) --no-tree --strict --terse --ignore PREFER_DEFINED_ATTRIBUTE_MACRO -f $(filter %.c %.h,$(DLMC_KSRC))

.PHONY: dlmc-kmod check-dlmc bench-dlmc

dlmc-kmod: $(DLMC_KO)

# Kbuild of 6.1 writes objects next to the sources, so build in a directory
# of links under $(BUILD) and keep the source tree clean.
$(DLMC_KO): $(DLMC_KSRC)
	@bash mk/deps.d/dlmc.sh
	@mkdir -p $(DLMC_KOUT)
	@for f in $(DLMC_KSRC); do ln -sf $(CURDIR)/$$f $(DLMC_KOUT)/; done
	$(MAKE) --no-print-directory -C build/kmod/headers M=$(CURDIR)/$(DLMC_KOUT) modules

$(DLMC_LIB): $(call objs,,$(DLMC_LSRC))
	@mkdir -p $(dir $@)
	ar rcs $@ $^

DLMC_TOOL_UTIL := $(BUILD)/$(DLMC_DIR)/tools/tool_util.o

$(DLMC_OUT)/dlmc_%: $(BUILD)/$(DLMC_DIR)/tools/dlmc_%.o $(DLMC_TOOL_UTIL) $(DLMC_LIB)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

DLMC_P2P := $(BUILD)/$(DLMC_DIR)/apps/p2p.o

$(DLMC_OUT)/dlmc_pi: $(BUILD)/$(DLMC_DIR)/apps/pi.o $(DLMC_P2P) $(DLMC_LIB)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

$(DLMC_OUT)/dlmc_tridiag: $(BUILD)/$(DLMC_DIR)/apps/tridiag.o $(DLMC_P2P) $(DLMC_LIB)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

$(DLMC_OUT)/dlmc_pingpong: $(BUILD)/$(DLMC_DIR)/apps/pingpong.o $(DLMC_P2P) $(DLMC_LIB)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lm

# Keep the objects (make would delete them as intermediates of the links).
.SECONDARY: $(DLMC_TOOL_UTIL) $(DLMC_P2P) \
	$(patsubst $(DLMC_OUT)/%,$(BUILD)/$(DLMC_DIR)/tools/%.o,$(DLMC_TOOLS))

$(DLMC_UNIT): $(BUILD)/$(DLMC_DIR)/tests/test_proto.o $(DLMC_LIB)
	$(MPICC) $(LDFLAGS) $^ -o $@ -lcmocka

check-dlmc: $(DLMC_LIB) $(DLMC_TOOLS) $(DLMC_APPS) $(DLMC_UNIT) dlmc-kmod
	@BUILD=$(BUILD) bash $(DLMC_DIR)/tests/dlmc.sh

bench-dlmc: $(DLMC_LIB) $(DLMC_TOOLS) $(DLMC_APPS) dlmc-kmod
	@BUILD=$(BUILD) bash $(DLMC_DIR)/tests/bench.sh
