# SPDX-License-Identifier: BSD-3-Clause
# libFuzzer targets (clang, ASan + UBSan), shared by the components whose
# parsers take untrusted input. A component declares one with
#   $(eval $(call fuzz_target,NAME,SOURCES,CLANG_FLAGS,SEEDS_DIR,DICT))
# which gives $(BUILD)/fuzz/fuzz-NAME and `make fuzz-NAME` (FUZZ_TIME
# seconds, corpus kept under $(BUILD)/fuzz/corpus-NAME); `make fuzz` runs
# them all. `make all` never needs clang: the suites build their targets
# themselves (test/lib.sh, t_fuzz) and skip with the reason without it.

FUZZ_TIME    ?= 60
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
FUZZ_TARGETS :=

define fuzz_target
$(BUILD)/fuzz/fuzz-$(1): $(2)
	@mkdir -p $$(dir $$@)
	clang $$(FUZZ_FLAGS) $(3) $$(filter %.c,$$^) -lm -o $$@

.PHONY: fuzz-$(1)
fuzz-$(1): $(BUILD)/fuzz/fuzz-$(1)
	@mkdir -p $(BUILD)/fuzz/corpus-$(1)
	$$< -max_total_time=$$(FUZZ_TIME) -timeout=5 -rss_limit_mb=1024 \
	    -artifact_prefix=$(BUILD)/fuzz/ $(if $(5),-dict=$(5)) $(BUILD)/fuzz/corpus-$(1) $(4)

FUZZ_TARGETS += fuzz-$(1)
endef
