# SPDX-License-Identifier: BSD-3-Clause
# analyzer/: tnbc-analyze (trace database -> profile) and suite `analyzer`
# (profile library, analyzer on hand-made traces, report, bounded fuzz run).

ANALYZER_SRCS := analyzer/main.c analyzer/tracedb.c analyzer/order.c analyzer/model.c \
                 analyzer/decide.c analyzer/prio.c analyzer/analyze.c analyzer/digest.c \
                 analyzer/measured.c analyzer/fidelity.c analyzer/platform.c analyzer/stats.c \
                 analyzer/spans.c
ANALYZER_OBJS := $(call objs,analyzer,$(ANALYZER_SRCS))
ANALYZER_BIN  := $(BUILD)/bin/tnbc-analyze
ANALYZER_TEST := $(BUILD)/analyzer/test/test_profile
ANALYZER_STATS_TEST := $(BUILD)/analyzer/test/test_stats
ANALYZER_SPANS_TEST := $(BUILD)/analyzer/test/test_spans

ALL_TARGETS  += $(ANALYZER_BIN)
CHECK_SUITES += analyzer

# profiles/module.mk is included after this file: name its outputs directly.
# libreplay/pieces.h: the replay's piece size, which the prediction assumes.
$(BUILD)/analyzer/%.o: CFLAGS += -Iprofiles -Ilibreplay -Ianalyzer

$(ANALYZER_BIN): $(ANALYZER_OBJS) $(BUILD)/lib/libtnbc-profile.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lsqlite3 -lm -o $@

$(ANALYZER_TEST): $(BUILD)/analyzer/test/test_profile.o $(BUILD)/lib/libtnbc-profile.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lcmocka -lm -o $@

$(ANALYZER_STATS_TEST): $(BUILD)/analyzer/test/test_stats.o $(BUILD)/analyzer/stats.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lcmocka -lm -o $@

$(ANALYZER_SPANS_TEST): $(BUILD)/analyzer/test/test_spans.o $(BUILD)/analyzer/spans.o
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lcmocka -lsqlite3 -lm -o $@

.PHONY: check-analyzer
# The end-to-end tests also trace a real program (libtrace, test/).
# The damaged-trace run uses an AddressSanitizer + UBSan build of the
# analyzer, where an overflow or a leak fails it.
check-analyzer: $(ANALYZER_BIN) $(ANALYZER_TEST) $(ANALYZER_STATS_TEST) $(ANALYZER_SPANS_TEST) $(BUILD)/lib/libtnbc-trace.so \
                $(BUILD)/bin/tnbc-merge $(BUILD)/test/trace/access_order
	@$(MAKE) --no-print-directory $(SUBMAKE_J) SAN=asan BUILD=build-asan build-asan/bin/tnbc-analyze > /dev/null
	@BUILD=$(BUILD) BUILD_ASAN=build-asan bash analyzer/test/run.sh

BENCH_SUITES += analyzer
.PHONY: bench-analyzer
bench-analyzer: $(ANALYZER_BIN)
	@BUILD=$(BUILD) bash analyzer/bench/bench.sh
