# SPDX-License-Identifier: BSD-3-Clause
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

# Fuzzing the strict reader (mk/fuzz.mk): `make fuzz-profile`.
$(eval $(call fuzz_target,profile,profiles/fuzz/fuzz_profile.c $(PROFILE_SRCS) profiles/profile.h core/fnv.h,-Iprofiles -Icore,profiles/fuzz/seeds,profiles/fuzz/profile.dict))
