#!/usr/bin/env bash
# PDBP test suite: unit tests, then MPI runs on 2-4 ranks (each bounded).
cd "$(dirname "$0")/../../.."
T_SUITE=pdbp
source test/lib.sh
: "${PDBP_BIN:=${BUILD:-build}/pdbp}"

echo "-- protocol and pool unit tests"
t_cmocka "$PDBP_BIN/test_proto"
t_cmocka "$PDBP_BIN/test_pool"

t_summary
