# profiles/: the profile file format (FORMAT.md) and its reader/writer,
# a static library shared by tnbc-analyze and libtnbc-replay (objects are
# -fPIC, so the replay .so links them in), plus the reader's fuzz target.

PROFILE_SRCS := profiles/profile.c profiles/profile_read.c profiles/profile_write.c
PROFILE_OBJS := $(call objs,profiles,$(PROFILE_SRCS))
PROFILE_LIB  := $(BUILD)/lib/libtnbc-profile.a
PROFILE_INC  := -Iprofiles

ALL_TARGETS += $(PROFILE_LIB)

$(PROFILE_LIB): $(PROFILE_OBJS)
	@mkdir -p $(dir $@)
	ar rcs $@ $^

# Fuzzing the strict reader with libFuzzer (clang). FUZZ_TIME seconds,
# corpus seeded from profiles/fuzz/seeds and kept under $(BUILD)/fuzz.
FUZZ_TIME    ?= 60
FUZZ_BIN     := $(BUILD)/fuzz/fuzz-profile
FUZZ_CORPUS  := $(BUILD)/fuzz/corpus-profile
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

$(FUZZ_BIN): profiles/fuzz/fuzz_profile.c $(PROFILE_SRCS) profiles/profile.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_FLAGS) -Iprofiles profiles/fuzz/fuzz_profile.c $(PROFILE_SRCS) -lm -o $@

.PHONY: fuzz-profile
fuzz-profile: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_CORPUS)
	$(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -timeout=5 -rss_limit_mb=1024 \
	    -artifact_prefix=$(BUILD)/fuzz/ \
	    -dict=profiles/fuzz/profile.dict $(FUZZ_CORPUS) profiles/fuzz/seeds
