# SPDX-License-Identifier: BSD-3-Clause
# scripts/: the front door (tnbc), its tools (tnbc-report, tnbc-timeline,
# install-tree, demo-table, add-spdx) and suite `frontdoor` (test/frontdoor.sh):
# help and usage errors, launchers, timeline, report formats, demo table,
# make install, licence and SPDX lines.
CHECK_SUITES += frontdoor

.PHONY: check-frontdoor
# Paths spelled out: test/ and libtrace/ fragments are read after this one.
check-frontdoor: $(BUILD)/lib/libtnbc-trace.so $(BUILD)/lib/libtnbc-replay.so \
                 $(BUILD)/bin/tnbc-analyze $(BUILD)/bin/tnbc-merge $(BUILD)/test/trace/access_order
	@BUILD=$(BUILD) bash test/frontdoor.sh
