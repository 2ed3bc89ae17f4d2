# SPDX-License-Identifier: BSD-3-Clause
# libcomm/ibconn: connection-scaling messaging over libibverbs, the memory
# model tool tnbc-connmodel, and their tests (host) and VM tests (soft-RoCE).

IBC_DIR   := libcomm/ibconn
IBC_BDIR  := $(BUILD)/$(IBC_DIR)
IBC_LIB   := $(IBC_BDIR)/libtnbc-ibconn.a
IBC_LIB_SRCS := $(addprefix $(IBC_DIR)/,ibc_opts.c ibc_dev.c ibc_qp.c ibc_proto.c \
                ibc_msg.c ibc_boot.c ibc_mem.c ibc_model.c)
IBC_CONNMODEL := $(BUILD)/bin/tnbc-connmodel
IBC_T_MODEL   := $(IBC_BDIR)/tests/t_model
IBC_T_MPI     := $(IBC_BDIR)/tests/ibc_test
IBC_BENCH_BIN := $(IBC_BDIR)/tests/ibc_bench

ALL_TARGETS  += $(IBC_LIB) $(IBC_CONNMODEL) $(IBC_T_MODEL) $(IBC_T_MPI) $(IBC_BENCH_BIN)
CHECK_SUITES += ibconn
BENCH_SUITES += ibconn

$(IBC_LIB): $(call objs,,$(IBC_LIB_SRCS))
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(IBC_CONNMODEL): $(call objs,,$(IBC_DIR)/connmodel.c $(IBC_DIR)/ibc_model.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -o $@

$(IBC_T_MODEL): $(call objs,,$(IBC_DIR)/tests/t_model.c $(IBC_DIR)/ibc_model.c)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $^ -lcmocka -lm -o $@

$(IBC_T_MPI): $(BUILD)/$(IBC_DIR)/tests/ibc_test.o $(IBC_LIB)
	$(MPICC) $(LDFLAGS) $^ -libverbs -o $@

$(IBC_BENCH_BIN): $(BUILD)/$(IBC_DIR)/tests/ibc_bench.o $(IBC_LIB)
	$(MPICC) $(LDFLAGS) $^ -libverbs -o $@

.PHONY: check-ibconn bench-ibconn
check-ibconn: $(IBC_CONNMODEL) $(IBC_T_MODEL) $(IBC_T_MPI)
	@BUILD=$(BUILD) $(IBC_DIR)/tests/suite.sh

bench-ibconn: $(IBC_CONNMODEL) $(IBC_BENCH_BIN)
	@BUILD=$(BUILD) $(IBC_DIR)/tests/bench.sh
