#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check-shmem: every multi-PE test on 2-4 PEs over shared memory, over MPI RMA
# (TNBC_SHMEM_TRANSPORT=rma) and over Open MPI's TCP BTL; bounds refusal in
# both error modes; unmodified OpenSHMEM programs built with tnbc-oshcc and
# started with tnbc-oshrun.
cd "$(dirname "$0")/../../.." || exit 1
: "${BUILD:=build}"
T_SUITE=shmem
T_TIMEOUT=${T_TIMEOUT:-60}
source test/lib.sh

B=$BUILD/shmem/test
# rma mode allocates no shared window, so osc pt2pt alone: with sm allowed,
# MPI_Win_allocate on one host would pick osc/sm and bypass TCP
TCP=(--mca pml ob1 --mca btl self,tcp --mca osc pt2pt)
P=libcomm/shmem/test/programs
OUT=$BUILD/shmem/programs
mkdir -p "$OUT"
TESTS=(t_rma t_sync t_amo t_coll t_team t_heap t_am t_seg t_getto t_static t_threads t_api)

for t in "${TESTS[@]}"; do
    t_run "$t np=2 shm" mpirun --oversubscribe -np 2 "$B/$t"
    t_run "$t np=4 shm" mpirun --oversubscribe -np 4 "$B/$t"
    t_run "$t np=3 rma" mpirun --oversubscribe -np 3 -x TNBC_SHMEM_TRANSPORT=rma "$B/$t"
    if [[ $t == t_threads ]]; then
        t_skip "$t np=2 rma+tcp" "Open MPI 4.1's osc pt2pt refuses windows under MPI_THREAD_MULTIPLE"
    else
        t_run "$t np=2 rma+tcp" mpirun --oversubscribe -np 2 "${TCP[@]}" -x TNBC_SHMEM_TRANSPORT=rma "$B/$t"
    fi
done

# profiling interface: a tool wrapping shmem_int_put/shmem_barrier_all and
# forwarding to pshmem_, preloaded and linked statically with the archive.
# In SAN=asan/tsan builds the sanitizer runtime must come first in the list.
PTOOL=$(ldd "$B/t_pshmem" 2>/dev/null | awk '$1 ~ /^lib[at]san\./ { printf "%s:", $3 }')$PWD/$B/libptool.so
for np in 2 4; do
    t_run "t_pshmem np=$np tool preloaded" mpirun --oversubscribe -np $np \
        -x LD_PRELOAD="$PTOOL" "$B/t_pshmem"
    t_run "t_pshmem np=$np tool linked with libtnbc-shmem.a" mpirun --oversubscribe -np $np \
        "$B/t_pshmem_static"
done
t_run "t_pshmem np=3 rma tool preloaded" mpirun --oversubscribe -np 3 -x TNBC_SHMEM_TRANSPORT=rma \
    -x LD_PRELOAD="$PTOOL" "$B/t_pshmem"
# every exported shmem_X/shmemx_X has its pshmem_X/pshmemx_X at the same
# address, and pshmem.h declares exactly those
pshmem_twins() {
    local so=$BUILD/lib/libtnbc-shmem.so syms missing n
    syms=$(nm -D --defined-only "$so" | awk '{print $1, $3}')
    n=$(awk '$2 ~ /^shmemx?_/' <<<"$syms" | wc -l)
    missing=$(awk '$2 ~ /^p?shmemx?_/ { a = $2; sub(/^p/, "", a); seen[a] = seen[a] " " $1 }
                   END { for (s in seen) { split(seen[s], v, " ");
                         if (v[1] != v[2] || v[3] != "") print s } }' <<<"$syms")
    [[ $n -gt 1000 ]] || { echo "only $n shmem_ symbols exported"; return 1; }
    [[ -z $missing ]] || { echo "without a pshmem_ twin at the same address: $missing"; return 1; }
    echo "$n exported shmem_/shmemx_ functions, each with its pshmem_ twin"
    diff <(libcomm/shmem/src/gen-pshmem-h.sh "$so") libcomm/shmem/include/pshmem.h ||
        { echo "include/pshmem.h is stale: regenerate with libcomm/shmem/src/gen-pshmem-h.sh"; return 1; }
}
export -f pshmem_twins
t_run "every exported shmem_ function has its pshmem_ twin; pshmem.h current" bash -c pshmem_twins

t_run "t_bounds np=2 skip" mpirun --oversubscribe -np 2 -x TNBC_SHMEM_ON_ERROR=skip \
    -x SHMEM_SYMMETRIC_SIZE=1048576 "$B/t_bounds"
t_run "t_bounds np=3 rma skip" mpirun --oversubscribe -np 3 -x TNBC_SHMEM_ON_ERROR=skip \
    -x SHMEM_SYMMETRIC_SIZE=1048576 -x TNBC_SHMEM_TRANSPORT=rma "$B/t_bounds"
for np in 2 4; do
    t_run "t_overflow np=$np skip" mpirun --oversubscribe -np $np -x TNBC_SHMEM_ON_ERROR=skip "$B/t_overflow"
done
t_run "t_overflow np=3 rma skip" mpirun --oversubscribe -np 3 -x TNBC_SHMEM_ON_ERROR=skip \
    -x TNBC_SHMEM_TRANSPORT=rma "$B/t_overflow"
overflow_abort() {
    local out rc
    out=$(t_mpirun 2 "$B/t_overflow" abort 2>&1); rc=$?
    echo "$out"
    [[ $rc -ne 0 && $rc -lt 124 ]] || { echo "exit $rc, want a clean failure"; return 1; }
    grep -q 'error PE 0: iput of 2 elements of 8 bytes at strides 1152921504606846976/1 to PE 1 refused: the span overflows' <<<"$out"
}
# default mode: the job ends non-zero, the message names PE and address
bounds_abort() {
    local out rc
    out=$(t_mpirun 2 "$B/t_bounds" abort 2>&1); rc=$?
    echo "$out"
    [[ $rc -ne 0 && $rc -lt 124 ]] || { echo "exit $rc, want a clean failure"; return 1; }
    grep -Eq 'error PE 0: put of 8 bytes at 0x[0-9a-f]+ on PE 1 refused' <<<"$out"
}
export B BUILD OUT P T_TIMEOUT
export -f bounds_abort overflow_abort t_mpirun t_mpi_argv
t_run "t_bounds abort names PE and address" bash -c bounds_abort
t_run "t_overflow abort: stride 2^60 ends the job" bash -c overflow_abort
bad_env() {
    local out
    out=$(t_mpirun 1 -x SHMEM_SYMMETRIC_SIZE=lots -x TNBC_SHMEM_TRANSPORT=fast \
          "$B/t_heap" 2>&1) || { echo "$out"; return 1; }
    echo "$out"
    grep -q 'SHMEM_SYMMETRIC_SIZE=lots is not a size' <<<"$out" &&
        grep -q 'TNBC_SHMEM_TRANSPORT=fast: expected auto or rma' <<<"$out"
}
export -f bad_env
t_run "bad environment values: one-line warning, defaults" bash -c bad_env

# Unmodified OpenSHMEM programs through the wrappers.
for src in "$P"/*.c; do
    name=$(basename "$src" .c)
    if t_run "tnbc-oshcc $name" "$BUILD/bin/tnbc-oshcc" -O2 -o "$OUT/$name" "$src"; then
        t_run "tnbc-oshrun -np 4 $name" timeout -k 5 "$T_TIMEOUT" \
            "$BUILD/bin/tnbc-oshrun" --oversubscribe -np 4 "$OUT/$name"
    fi
done
for prog in gups ring; do
    t_run "tnbc-oshrun over TCP: $prog" timeout -k 5 "$T_TIMEOUT" "$BUILD/bin/tnbc-oshrun" \
        --oversubscribe -np 3 "${TCP[@]}" -x TNBC_SHMEM_TRANSPORT=rma "$OUT/$prog"
done
t_run "tnbc-oshcc -c then link" bash -c "$BUILD/bin/tnbc-oshcc -c $P/ring.c -o $OUT/ring.o &&
    $BUILD/bin/tnbc-oshcc $OUT/ring.o -o $OUT/ring2 && $BUILD/bin/tnbc-oshrun -np 2 $OUT/ring2"
pc_build() {
    PKG_CONFIG_PATH=$BUILD/lib/pkgconfig gcc -std=c11 -o "$OUT/hello_pc" "$P/hello.c" \
        $(PKG_CONFIG_PATH=$BUILD/lib/pkgconfig pkg-config --cflags --libs tnbc-shmem) &&
        t_mpirun 2 "$OUT/hello_pc"
}
export -f pc_build
t_run "pkg-config tnbc-shmem: plain gcc build runs" bash -c pc_build
# The headers as C++ (extern "C", no _Generic) and as C99 (no generics).
# (through tnbc-oshcc with mpicxx as the compiler, so sanitizer builds link)
cxx_build() {
    OSHCC_CC=mpicxx "$BUILD/bin/tnbc-oshcc" -std=c++11 -Wall -Wextra -Werror -pedantic \
        -o "$OUT/ring_cxx" libcomm/shmem/test/cxx/ring.cpp && t_mpirun 3 "$OUT/ring_cxx"
}
c99_build() {
    printf '#include <shmem.h>\n#include <shmemx.h>\n#include <pshmem.h>\nint main(void) { shmem_init(); shmem_finalize(); return 0; }\n' \
        > "$OUT/c99.c" &&
        gcc -std=c99 -pedantic -Wall -Wextra -Werror -Ilibcomm/shmem/include \
            $(mpicc --showme:compile) -fsyntax-only "$OUT/c99.c"
}
export -f cxx_build c99_build
t_run "C++ program (mpicxx -pedantic) builds and runs" bash -c cxx_build
t_run "headers compile as C99 -pedantic" bash -c c99_build
# exported symbols: the API and shmemx_ only, no internals
exports() {
    local bad
    bad=$(nm -D --defined-only "$BUILD/lib/libtnbc-shmem.so" | awk '{print $3}' |
          grep -Ev '^(shmem_|shmemx_|pshmem_|pshmemx_|start_pes$|_my_pe$|_num_pes$|shmalloc$|shfree$|shrealloc$|shmemalign$|SHMEM_)')
    [[ -z $bad ]] || { echo "exported: $bad"; return 1; }
    nm -D --defined-only "$BUILD/lib/libtnbc-shmem.so" | grep -q ' shmemx_send$'
}
export -f exports
t_run "only shmem_*/shmemx_* symbols exported" bash -c exports
# The same sources build with Open MPI's own oshcc: they use only the standard API.
if command -v oshcc >/dev/null; then
    for src in "$P"/*.c; do
        t_run "Open MPI oshcc accepts $(basename "$src")" \
            oshcc -std=c11 -c -o "$OUT/$(basename "$src" .c).ompi.o" "$src"
    done
else
    t_skip "Open MPI oshcc" "oshcc not installed"
fi

t_summary
