#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# pshmem-alias.sh IN.o OUT.o - the OpenSHMEM profiling interface, generated.
# Every global function shmem_X (shmemx_X) defined in IN.o gets a strong
# twin pshmem_X (pshmemx_X) at the same address, and shmem_X itself becomes
# weak, as MPI libraries do for PMPI_: a tool defines shmem_X and calls
# pshmem_X, whether it is preloaded, linked before the shared library, or
# linked with the static one (its strong shmem_X wins over the weak one).
# The list comes from the object's own symbol table, so no routine is missed
# and none is written twice by hand.
set -eu
in=$1 out=$2
OBJCOPY=${OBJCOPY:-objcopy}
# objdump -t: VALUE FLAGS... SECTION SIZE NAME; keep global ("g") functions
args=$(objdump -t "$in" | awk '
    $2 == "g" && $3 == "F" && $NF ~ /^shmemx?_/ {
        printf " --add-symbol p%s=%s:0x%s,global,function --weaken-symbol %s",
               $NF, $4, $1, $NF
    }')
# shellcheck disable=SC2086  # args is a list of options, split on purpose
"$OBJCOPY" $args "$in" "$out"
