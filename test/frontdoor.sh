#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The front door as a user meets it: every command's --help, usage errors,
# errors naming the user's paths, the launchers, the timeline export checked
# against the database, the report's formats, the demo's table, `make
# install` into a temporary prefix used from outside the source tree, and
# the SPDX line of every source file.
set -u
cd "$(dirname "$0")/.."
source test/lib.sh
ROOT=$PWD
B=$BUILD
TNBC=$ROOT/scripts/tnbc
export TNBC_BUILD=$ROOT/$B
PY=/usr/bin/python3
AO=$ROOT/$B/test/trace/access_order
W=$(mktemp -d /tmp/tnbc-frontdoor.XXXXXX)
trap 'rm -rf "$W"' EXIT

SUBS=(trace analyze run report timeline merge cluster)

# ---------------------------------------------------------------- help

help_of() { # SUB: --help exits 0, names the command, lists options, has an example
    local out; out=$("$TNBC" "$1" --help 2>&1) || { echo "exit $?"; echo "$out"; return 1; }
    grep -q "^usage: tnbc $1" <<<"$out" || { echo "no 'usage: tnbc $1'"; echo "$out"; return 1; }
    grep -q '^example' <<<"$out" || { echo "no example"; echo "$out"; return 1; }
    # merge has no option but --help; cluster's are in its synopsis lines.
    [[ $1 == merge || $1 == cluster ]] || grep -qE '^  +-' <<<"$out" ||
        { echo "no options listed"; echo "$out"; return 1; }
}
for s in "${SUBS[@]}"; do t_run "help: tnbc $s --help" help_of "$s"; done

no_args() { # tnbc alone: the usage on stderr, exit 2; --help: exit 0
    local rc=0 err; err=$("$TNBC" 2>&1 >/dev/null) || rc=$?
    [[ $rc -eq 2 ]] || { echo "tnbc alone: exit $rc, expected 2"; return 1; }
    grep -q '^usage: tnbc COMMAND' <<<"$err" || { echo "no usage on stderr: $err"; return 1; }
    for c in "${SUBS[@]}"; do grep -q "^  $c " <<<"$err" || { echo "usage omits $c"; return 1; }; done
    "$TNBC" --help > /dev/null || { echo "tnbc --help: exit $?"; return 1; }
}
t_run "help: tnbc alone exits 2 with the usage naming every command" no_args

# ---------------------------------------------------------------- usage errors

# usage_error EXPECTED-SUBSTRING ARGS...: exit 2, one line on stderr that
# contains the substring, nothing about shell internals.
usage_error() {
    local want=$1; shift
    local rc=0 err; err=$(cd "$W" && "$TNBC" "$@" 2>&1 >/dev/null) || rc=$?
    [[ $rc -eq 2 ]] || { echo "tnbc $*: exit $rc, expected 2: $err"; return 1; }
    [[ $(wc -l <<<"$err") -eq 1 ]] || { echo "tnbc $*: not one line:"; echo "$err"; return 1; }
    grep -qF -- "$want" <<<"$err" || { echo "tnbc $*: '$err' does not say '$want'"; return 1; }
    ! grep -qE 'unbound variable|line [0-9]+:|Traceback' <<<"$err" || { echo "internal error: $err"; return 1; }
}
t_run "usage: trace -o without a value"        usage_error "option -o needs a value" trace -o
t_run "usage: trace --max-calls without value" usage_error "option --max-calls needs a value" trace --max-calls
t_run "usage: trace --max-calls not a number"  usage_error "option --max-calls: 'x'" trace --max-calls x -- true
t_run "usage: trace --chunks followed by --"   usage_error "option --chunks needs a value" trace --chunks -- true
t_run "usage: trace unknown option"            usage_error "unknown option --bogus" trace --bogus
t_run "usage: trace without a program"         usage_error "no program given" trace -o x.db --
t_run "usage: run -p without a value"          usage_error "option -p needs a value" run -p
t_run "usage: run without -p"                  usage_error "option -p APP.profile is required" run -- true
t_run "usage: run --summary without a value"   usage_error "option --summary needs a value" run -p x --summary
t_run "usage: analyze without -o"              usage_error "option -o APP.profile is required" analyze x.db
t_run "usage: analyze -o without a value"      usage_error "option -o needs a value" analyze x.db -o
t_run "usage: analyze --measured w/o value"    usage_error "option --measured needs a value" analyze x.db -o p --measured
t_run "usage: analyze --platform w/o value"    usage_error "option --platform needs a value" analyze x.db -o p --platform
t_run "usage: analyze two traces"              usage_error "one trace database at a time ('b.db')" analyze a.db b.db -o p
t_run "usage: merge without inputs"            usage_error "needs OUT.db and at least one" merge out.db
t_run "usage: report unknown --format"         bash -c "cd '$W' && '$TNBC' report x.db --format xml 2>&1 >/dev/null | grep -q \"invalid choice: 'xml'\"; [[ \${PIPESTATUS[0]} -eq 2 ]]"
t_run "usage: timeline without -o"             bash -c "cd '$W' && '$TNBC' timeline x.db 2>&1 >/dev/null | grep -q 'the following arguments are required: -o'; [[ \${PIPESTATUS[0]} -eq 2 ]]"
t_run "usage: unknown command"                 usage_error "unknown command 'bogus'" bogus

# ---------------------------------------------------------------- failures naming the user's paths

no_mpi() { # a trace of a program that never calls MPI_Init: exit non-zero, say so
    local rc=0 err; err=$(cd "$W" && "$TNBC" trace -o nompi.db -- /bin/true 2>&1) || rc=$?
    [[ $rc -ne 0 ]] || { echo "exit 0"; return 1; }
    grep -q 'no trace was written to nompi.db' <<<"$err" || { echo "$err"; return 1; }
    [[ ! -e $W/nompi.db ]] || { echo "a database was left"; return 1; }
}
t_run "fail: trace of /bin/true exits non-zero" no_mpi

# A program whose own MPI_Init (a tool linked into it) calls PMPI_Init:
# tnbc's is never called. The trace says so on stderr, once per rank that
# calls a collective, names the program as MPI_Init's owner, writes no
# database and leaves the program's output alone.
foreign_init() {
    mpicc -O2 -DOWN_MPI_INIT -o "$W/own_mpi_init" "$ROOT/test/frontdoor/pmpi_tool_app.c" || return 1
    t_mpirun 2 "$W/own_mpi_init" 2>/dev/null | sort > "$W/own.plain" || return 1
    local rc=0 err
    err=$(cd "$W" && "$TNBC" trace -o own.db -- timeout -k 5 60 mpirun --oversubscribe -np 2 \
            "$W/own_mpi_init" 2>&1 >"$W/own.traced") || rc=$?
    [[ $rc -ne 0 ]] || { echo "exit 0 without a trace"; return 1; }
    cmp -s "$W/own.plain" <(sort "$W/own.traced") || { echo "output differs"; return 1; }
    [[ $(grep -c "MPI was initialised without tnbc's MPI_Init (MPI_Init is $W/own_mpi_init's" <<<"$err") -ge 1 ]] ||
        { echo "not said: $err"; return 1; }
    grep -q "never called tnbc's MPI_Init" <<<"$err" || { echo "front door: $err"; return 1; }
}
t_run "fail: a program with its own MPI_Init: tnbc says it stays off, output unchanged" foreign_init

# A PMPI tool preloaded behind tnbc (the caller's LD_PRELOAD, kept after
# tnbc's library): tnbc passes MPI_Init, MPI_Finalize and the calls it does
# not transform on to the tool's MPI_x, not to PMPI_x, so the tool sees
# them (before, it saw no MPI_Init and never reached its MPI_Finalize: a
# tool like Darshan wrote no log). Traced and tuned (forced on), the
# tool's counts and the program's output are the plain run's.
tool_behind() {
    mpicc -O2 -shared -fPIC -o "$W/libpmpi_tool.so" "$ROOT/test/frontdoor/pmpi_tool.c" &&
        mpicc -O2 -o "$W/pmpi_tool_app" "$ROOT/test/frontdoor/pmpi_tool_app.c" || return 1
    local run=(timeout -k 5 60 mpirun --oversubscribe -np 2) mode
    (cd "$W" && LD_PRELOAD="$W/libpmpi_tool.so" "${run[@]}" ./pmpi_tool_app > tool.plain.out 2> tool.plain.err) ||
        return 1
    grep -q "tool rank 0: inits 1 sends 3 writes 3" "$W/tool.plain.err" || { cat "$W/tool.plain.err"; return 1; }
    (cd "$W" && LD_PRELOAD="$W/libpmpi_tool.so" "$TNBC" trace -o tool.db -- "${run[@]}" ./pmpi_tool_app \
        > tool.trace.out 2> tool.trace.err && "$TNBC" analyze tool.db -o tool.profile -q &&
        sed -E 's/^  decision off .*/  decision on forced/' tool.profile > tool.on.profile &&
        LD_PRELOAD="$W/libpmpi_tool.so" "$TNBC" run -p tool.on.profile -- "${run[@]}" ./pmpi_tool_app \
        > tool.tuned.out 2> tool.tuned.err) || { cat "$W"/tool.*.err; return 1; }
    for mode in trace tuned; do
        cmp -s <(sort "$W/tool.plain.out") <(sort "$W/tool.$mode.out") || { echo "$mode: output differs"; return 1; }
        cmp -s <(grep '^tool' "$W/tool.plain.err" | sort) <(grep '^tool' "$W/tool.$mode.err" | sort) ||
            { echo "$mode: the tool saw other calls:"; grep '^tool' "$W/tool.$mode.err"; return 1; }
    done
}
t_run "launch: a PMPI tool preloaded behind tnbc sees MPI_Init, MPI_Finalize, I/O and sends" tool_behind

# fails_naming WANT REJECT ARGS...: exit 1, stderr names WANT and not REJECT.
fails_naming() {
    local want=$1 reject=$2; shift 2
    local rc=0 err; err=$(cd "$W" && "$@" 2>&1 >/dev/null) || rc=$?
    [[ $rc -eq 1 ]] || { echo "$*: exit $rc, expected 1: $err"; return 1; }
    grep -qF -- "$want" <<<"$err" || { echo "'$err' does not name '$want'"; return 1; }
    ! grep -qF -- "$reject" <<<"$err" || { echo "'$err' names '$reject'"; return 1; }
}

# A real trace to analyze: 2 ranks, Alltoall of 64 KiB blocks read in the
# order 1,0 (the program's known pattern), 4 calls.
t_mpirun 2 "$AO" alltoall 65536 1,0 4 > "$W/plain.out" 2>&1
trace_it() { cd "$W" && "$TNBC" trace -o run.db -- timeout -k 5 60 mpirun --oversubscribe -np 2 "$AO" alltoall 65536 1,0 4 > trace.out; }
t_run "workflow: trace a 2-rank Alltoall" trace_it
echo garbage > "$W/garbage.txt"
t_run "fail: analyze -o into a missing directory names it" \
    fails_naming "/nonexistent/dir/x.profile" ".tmp" "$TNBC" analyze run.db -o /nonexistent/dir/x.profile
t_run "fail: tnbc-analyze itself names the profile, not its .tmp" \
    bash -c "cd '$W' && '$ROOT/$B/bin/tnbc-analyze' run.db -o /nonexistent/x.profile -q 2>&1 | grep -v warning | grep -qx 'tnbc-analyze: /nonexistent/x.profile: cannot create: No such file or directory'"
t_run "fail: analyze --measured garbage says a replay summary was expected" \
    fails_naming "--measured garbage.txt: not a replay summary" "tnbc-measured" "$TNBC" analyze run.db -o x.profile --measured garbage.txt
t_run "fail: analyze --measured of a missing path names it" \
    fails_naming "--measured nothere: no such file" "/tmp/" "$TNBC" analyze run.db -o x.profile --measured nothere
t_run "fail: analyze --measured of the trace itself" \
    fails_naming "not a replay summary: 2 rank(s) ran in trace mode" "tnbc-measured" "$TNBC" analyze run.db -o x.profile --measured run.db
# --platform reaches tnbc-analyze: the profile says it is a projection
# (docs/analyzer.md), and a bad spec is tnbc-analyze's one-line error.
projected() {
    cd "$W" && "$TNBC" analyze run.db -o proj.profile -q \
        --platform link=200Mbit,latency=50us,ppn=1,nodes=2 &&
    grep -q '^source .*projection:.*link=200Mbit,latency=50us,ppn=1,nodes=2' proj.profile
}
t_run "workflow: analyze --platform writes a projected profile" projected
bad_platform() {
    local rc=0 err; err=$(cd "$W" && "$TNBC" analyze run.db -o x.profile --platform bogus=1 2>&1 >/dev/null) || rc=$?
    [[ $rc -ne 0 ]] || { echo "exit 0 for --platform bogus=1"; return 1; }
    grep -qF -- "--platform: 'bogus' is not one of link=" <<<"$err" || { echo "'$err' does not name the key"; return 1; }
}
t_run "fail: analyze --platform with a bad spec names the key" bad_platform
t_run "fail: run -p of a missing profile names it" \
    fails_naming "-p missing.profile: no such file" "$ROOT" "$TNBC" run -p missing.profile -- true
t_run "fail: report of a missing database names it" \
    fails_naming "nothere.db: no such file" "Traceback" "$TNBC" report nothere.db -o "$W/r"

# The caller's LD_PRELOAD (an allocator, another tool) reaches the ranks
# behind tnbc's library, whose free() stays the process's (docs/limits.md).
keeps_preload() {
    cat > "$W/mark.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
__attribute__((constructor)) static void mark(void)
{
    const char *rank = getenv("OMPI_COMM_WORLD_RANK");
    Dl_info di;
    void *f = dlsym(RTLD_DEFAULT, "free");
    if (rank)
        fprintf(stderr, "mark rank %s free from %s\n", rank,
                f && dladdr(f, &di) && strstr(di.dli_fname, "libtnbc-") ? "tnbc" : "elsewhere");
}
C
    cc -shared -fPIC -o "$W/mark.so" "$W/mark.c" -ldl || return 1
    (cd "$W" && "$TNBC" analyze run.db -o keep.profile -q) || return 1
    local mode err
    for mode in trace run; do
        if [[ $mode == trace ]]; then
            err=$(cd "$W" && LD_PRELOAD=$W/mark.so "$TNBC" trace -o keep.db -- \
                  timeout -k 5 60 mpirun --oversubscribe -np 2 "$AO" alltoall 65536 1,0 2 2>&1 >/dev/null)
        else
            err=$(cd "$W" && LD_PRELOAD=$W/mark.so "$TNBC" run -p keep.profile -- \
                  timeout -k 5 60 mpirun --oversubscribe -np 2 "$AO" alltoall 65536 1,0 2 2>&1 >/dev/null)
        fi
        [[ $(grep -c '^mark rank [01] free from tnbc$' <<<"$err") -eq 2 ]] ||
            { echo "tnbc $mode: the caller's preload missing or ahead of tnbc:"; echo "$err"; return 1; }
    done
}
t_run "launch: the caller's LD_PRELOAD is kept, behind tnbc's library" keeps_preload

# ---------------------------------------------------------------- launchers

# A fake MPICH mpiexec (Hydra): prints its arguments. Settings must come as
# -genv NAME VALUE; a launcher it does not know inherits them.
mkdir -p "$W/fake"
cat > "$W/fake/mpiexec" <<'EOF'
#!/bin/sh
[ "$1" = --version ] && { echo "HYDRA build details:"; echo "    Version: 4.0.2"; exit 0; }
printf '%s\n' "$@"
EOF
chmod +x "$W/fake/mpiexec"
hydra() {
    local out; out=$(cd "$W" && TNBC_FOO=bar "$TNBC" run -p run.db -- "$W/fake/mpiexec" -n 2 ./app) || return 1
    # run.db as the profile: only its path matters here.
    local args; args=$(paste -sd' ' <<<"$out")
    [[ " $args " == *" -genv LD_PRELOAD $ROOT/$B/lib/libtnbc-replay.so "* &&
       " $args " == *" -genv TNBC_PROFILE $W/run.db "* &&
       " $args " == *" -n 2 ./app "* ]] || { echo "got: $args"; return 1; }
    # The caller's exported TNBC_* travel; the script's own variables not.
    [[ " $args " == *" -genv TNBC_FOO bar "* ]] || { echo "exported TNBC_FOO not passed on: $args"; return 1; }
    [[ " $args " != *" TNBC_LAYOUT "* ]] || { echo "tnbc's own TNBC_LAYOUT passed on: $args"; return 1; }
    [[ " $args " != *" -x "* ]] || { echo "Open MPI's -x given to Hydra: $args"; return 1; }
}
t_run "launch: MPICH's mpiexec gets -genv NAME VALUE" hydra
behind_timeout() { # the launcher behind a wrapper still gets its options
    local out; out=$(cd "$W" && "$TNBC" run -p run.db -- timeout -k 5 30 "$W/fake/mpiexec" -n 2 ./app) || return 1
    local args; args=$(paste -sd' ' <<<"$out")
    [[ " $args " == *" -genv TNBC_PROFILE $W/run.db "* && " $args " == *" -n 2 ./app "* ]] ||
        { echo "got: $args"; return 1; }
}
t_run "launch: timeout -k 5 30 mpiexec ... gets -genv after mpiexec" behind_timeout
inherit() {
    local out; out=$(cd "$W" && TNBC_FOO=bar "$TNBC" run -p run.db -- sh -c 'echo "$LD_PRELOAD $TNBC_FOO $TNBC_PROFILE"')
    [[ "$out" == "$ROOT/$B/lib/libtnbc-replay.so bar $W/run.db" ]] || { echo "got: $out"; return 1; }
}
t_run "launch: another launcher inherits the settings" inherit

# ---------------------------------------------------------------- workflow, timeline, report

force_on() { sed -E 's/^  decision off .*/  decision on forced by the frontdoor test/' "$1" > "$2"; }
tuned() {
    cd "$W" && "$TNBC" analyze run.db -o app.profile -q && force_on app.profile on.profile &&
        "$TNBC" run -p on.profile --summary rep.d -- timeout -k 5 60 mpirun --oversubscribe -np 2 \
            "$AO" alltoall 65536 1,0 4 > tuned.out && cmp plain.out tuned.out &&
        "$TNBC" merge rep.db rep.d > /dev/null
}
t_run "workflow: analyze, tuned run (bit-identical output), merge" tuned
# A mistyped merge loses nothing: an option it does not take, an input that
# is not there, or OUT.db named again as an input leave OUT.db as it was.
merge_mistyped() {
    cd "$W" || return 1
    local before err
    before=$(md5sum < rep.db)
    err=$("$TNBC" merge rep.d -o rep.db 2>&1 > /dev/null) && return 1
    [[ $err == *"unknown option -o"* ]] || { echo "said: $err"; return 1; }
    err=$("$TNBC" merge rep.db rep.d/no-such.db 2>&1 > /dev/null) && return 1
    [[ $err == *"no-such.db: no such file"* ]] || { echo "said: $err"; return 1; }
    err=$("$TNBC" merge rep.db rep.db 2>&1 > /dev/null) && return 1
    [[ $err == *"is also an input"* ]] || { echo "said: $err"; return 1; }
    err=$("$TNBC" merge rep.d rep.db 2>&1 > /dev/null) && return 1
    [[ $err == *"is a directory"* ]] || { echo "said: $err"; return 1; }
    [[ $(md5sum < rep.db) == "$before" && $(ls rep.d | wc -l) -eq 2 ]] ||
        { echo "rep.db or rep.d changed"; return 1; }
    ! ls rep.db.tmp-* 2> /dev/null
}
t_run "merge: a mistyped command leaves OUT.db and the inputs as they were" merge_mistyped
# The early returns' steps and landings per rank and site (early_cost):
# tnbc merge carries every rank's row, and tnbc report shows them. The
# program made 4 early Alltoalls per rank, each landing one remote 64 KiB
# block.
early_cost_merged() {
    cd "$W" || return 1
    local f per merged
    per=$(for f in rep.d/rank-*.db; do
              sqlite3 "$f" "SELECT rank, site, early, arm_ns, copy_ns, land_bytes FROM early_cost"
          done | sort)
    merged=$(sqlite3 rep.db "SELECT rank, site, early, arm_ns, copy_ns, land_bytes FROM early_cost" | sort)
    echo "$merged"
    [[ $(echo "$merged" | wc -l) -eq 2 && $per == "$merged" ]] ||
        { echo "the rank files' rows: $per"; return 1; }
    [[ $(sqlite3 rep.db "SELECT group_concat(early || ':' || land_bytes, ' ') FROM early_cost
                         WHERE site LIKE 'access_order+%' AND op = 'alltoall'") == "4:262144 4:262144" ]] ||
        { echo "want 4 early returns and 4 x 64 KiB landed per rank"; return 1; }
    "$TNBC" report rep.d -o rep-ec --no-plots > ec.txt || return 1
    grep -q "early return (measured, mean of 8 early calls on 2 rank(s)): candidate" ec.txt &&
        grep -q "landing: 0.5 MiB written in by the progress thread" ec.txt || { cat ec.txt; return 1; }
}
t_run "summary: early_cost per rank, merged and reported" early_cost_merged
t_run "timeline: tnbc timeline run.db rep.d -o both.json --html" \
    bash -c "cd '$W' && '$TNBC' timeline run.db rep.d -o both.json --html both.html && test -s both.html"
# The JSON read back, checked against the databases with queries of its own,
# and against the program's known shape (2 ranks, blocks of 64 KiB, read 1 then 0).
t_run "timeline: events match the databases and the program's read order" \
    $PY test/frontdoor/check_timeline.py "$W/both.json" "$W/run.db" "$W/rep.db" 1,0 65536
# A summary written before the activity tables existed: drawn without them.
old_summary() {
    cp "$W/rep.db" "$W/old.db" &&
        $PY -c 'import sqlite3, sys; sqlite3.connect(sys.argv[1]).executescript("DROP TABLE arrival; DROP TABLE fault_wait; DROP TABLE progress; DROP TABLE activity;")' "$W/old.db" &&
        "$TNBC" timeline "$W/old.db" -o "$W/old.json" 2> /dev/null &&
        $PY -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
assert any(e.get("cat") == "collective" for e in ev)
assert not any(e.get("tid") in (2, 3, 4) for e in ev), "activity tracks from a summary without them"' "$W/old.json"
}
t_run "timeline: a replay summary without the activity tables (older tnbc) still reads" old_summary
# The activity buffer is bounded: with room for 5 events per rank, 5 rows
# are written, the rest counted as dropped, and the timeline says so.
bounded() {
    cd "$W" && TNBC_REPLAY_ACTIVITY_MAX=5 "$TNBC" run -p on.profile --summary cap.d -- \
        timeout -k 5 60 mpirun --oversubscribe -np 2 "$AO" alltoall 65536 1,0 4 > cap.out &&
        cmp plain.out cap.out && "$TNBC" merge cap.db cap.d > /dev/null &&
        "$TNBC" timeline cap.db -o cap.json 2> /dev/null &&
        $PY -c 'import json, sqlite3, sys
db = sqlite3.connect("cap.db")
for rank, events, dropped in db.execute("SELECT rank, events, dropped FROM activity"):
    rows = sum(db.execute(q, (rank,)).fetchone()[0] for q in (
        "SELECT count(*) FROM arrival JOIN call USING (call_id) WHERE rank = ?",
        "SELECT count(*) FROM fault_wait JOIN call USING (call_id) WHERE rank = ?",
        "SELECT count(*) FROM progress WHERE rank = ?"))
    # 4 early calls, 2 blocks each: at least 8 arrivals were recorded
    assert events == 5 and rows == 5 and dropped >= 3, (rank, events, rows, dropped)
    ev = json.load(open("cap.json"))["traceEvents"]
    assert [e for e in ev if e.get("cat") == "dropped" and e["args"]["dropped"] == dropped], dropped
assert db.execute("SELECT count(*) FROM activity").fetchone()[0] == 2'
}
t_run "summary: the activity buffer is bounded (TNBC_REPLAY_ACTIVITY_MAX=5), the rest counted as dropped" bounded

# The program's identity: the trace records the executable's build-id (as
# readelf prints it here, independently), the profile carries it, and a
# profile whose identity differs gives one warning and no early return.
identity() {
    cd "$W" || return 1
    local id; id=$(LC_ALL=C readelf -n "$AO" | sed -n 's/^ *Build ID: *//p')
    [[ -n "$id" ]] || { echo "no build-id in $AO"; return 1; }
    [[ $(sqlite3 run.db "SELECT value FROM meta WHERE key = 'program'") == "access_order build-id:$id" ]] ||
        { echo "meta program: $(sqlite3 run.db "SELECT value FROM meta WHERE key = 'program'")"; return 1; }
    [[ $(sed -n 2p on.profile) == "# program access_order build-id:$id" ]] || { head -3 on.profile; return 1; }
    sed "2s/build-id:$id/build-id:0000/" on.profile > other.profile
    "$TNBC" run -p other.profile --summary other.d -- timeout -k 5 60 mpirun --oversubscribe -np 2 \
        "$AO" alltoall 65536 1,0 4 > other.out 2> other.err && cmp plain.out other.out || return 1
    [[ $(grep -c 'warning: other.profile was made for another build of access_order' other.err) -eq 1 ]] ||
        { cat other.err; return 1; }
    "$TNBC" merge other.db other.d > /dev/null &&
        [[ $(sqlite3 other.db "SELECT count(*) FROM call WHERE wait_ns >= 0") -eq 0 ]] ||
        { echo "early returns with a profile of another build"; return 1; }
    [[ -z $(ls -A | grep '\.checked$') ]] || { echo "checked copy left behind"; return 1; }
    # Without the front door (a launcher tnbc cannot wrap), the runtime
    # compares the build-id itself: one warning, from rank 0, and no early return.
    timeout -k 5 60 mpirun --oversubscribe -np 2 -x LD_PRELOAD="$ROOT/$B/lib/libtnbc-replay.so" \
        -x TNBC_PROFILE="$W/other.profile" -x TNBC_REPLAY_DIR="$W/direct.d" \
        "$AO" alltoall 65536 1,0 4 > direct.out 2> direct.err && cmp plain.out direct.out || return 1
    local on; on=$(awk '/^site access_order\+/ { s = 1; next } /^site / { s = 0 }
                        s && /^  decision on/ { n++ } END { print n + 0 }' other.profile)
    [[ $on -gt 0 && $(grep -c 'made for another build' direct.err) -eq 1 ]] &&
        grep -q "^tnbc\[0\]: warning: $W/other.profile was made for another build of access_order (build-id:0000; this one is build-id:$id): its $on call sites in access_order that were on run blocking$" direct.err ||
        { cat direct.err; return 1; }
    "$TNBC" merge direct.db direct.d > /dev/null &&
        [[ $(sqlite3 direct.db "SELECT count(*) FROM call WHERE wait_ns >= 0") -eq 0 ]] ||
        { echo "early returns with a profile of another build, started without the front door"; return 1; }
    # and the profile of this build: early returns (8 Alltoalls, 2 ranks x 4)
    [[ $(sqlite3 rep.db "SELECT count(*) FROM call WHERE op = 'alltoall' AND wait_ns >= 0") -eq 8 ]]
}
if command -v readelf > /dev/null && command -v sqlite3 > /dev/null; then
    t_run "identity: a profile of another build warns once, its sites run blocking" identity
else
    t_skip "identity" "readelf or sqlite3 not installed"
fi

report_formats() {
    cd "$W" || return 1
    "$TNBC" report run.db rep.db -p app.profile -o rep --format csv --no-plots > sites.csv || return 1
    "$TNBC" report run.db rep.db -p app.profile -o rep --format json --no-plots > sites.json || return 1
    "$TNBC" report run.db -p app.profile -o rep > sites.txt || return 1
    cmp sites.csv rep/summary.csv && cmp sites.json rep/summary.json || return 1
    # The run's --summary directory reads as its merged database.
    "$TNBC" report run.db rep.d -p app.profile -o rep.fromdir --format csv --no-plots > fromdir.csv &&
        cmp sites.csv fromdir.csv || { echo "report of rep.d differs from rep.db's"; return 1; }
    # A trace's per-rank directory is merged in a temporary place; the
    # profile the report makes names the directory, not that place.
    "$TNBC" report run.db.d -o rep.tracedir --no-plots > /dev/null &&
        grep -qx "source run.db.d" rep.tracedir/report.profile ||
        { grep "^source" rep.tracedir/report.profile; echo "report.profile's source is not run.db.d"; return 1; }
    # One row per site of the profile, each with the profile's decision.
    $PY - app.profile sites.csv sites.json <<'EOF'
import csv, json, sys
prof, rows_csv, doc = sys.argv[1], sys.argv[2], sys.argv[3]
want, site = {}, None
for line in open(prof):
    t = line.split()
    if t[:1] == ["site"]:
        site = (t[1], t[2])
    elif t[:1] == ["decision"]:
        want[site] = (t[1], line.split(None, 2)[2].strip() if len(t) > 2 else "")
rows = list(csv.DictReader(open(rows_csv)))
got = {(r["site"], r["op"]): (r["decision"], r["reason"]) for r in rows}
assert got == want, (got, want)
j = json.load(open(doc))
assert {(s["site"], s["op"]): (s["decision"], s["reason"]) for s in j["sites"]} == want
a2a = [s for s in j["sites"] if s["op"] == "alltoall"]
assert len(a2a) == 1 and a2a[0]["order"] == "1 0" and a2a[0]["calls"] == 4, a2a
assert a2a[0]["recv_bytes"] == 2 * 4 * 2 * 65536, a2a   # 2 ranks x 4 calls x 2 blocks
EOF
    grep -q 'order (consensus): 1 0' sites.txt && test -s rep/overlap.png
}
t_run "report: --format csv and json agree with the profile, text still" report_formats

# ---------------------------------------------------------------- demo table

t_run "demo: the final table names each site's decision and reason" \
    bash -c "scripts/demo-table test/frontdoor/demo-table.txt test/frontdoor | diff test/frontdoor/demo-table.expected -"

# ---------------------------------------------------------------- make install

installed() {
    local stage=$W/stage prefix=/opt/tnbc-test
    make --no-print-directory -s install PREFIX=$prefix DESTDIR="$stage" BUILD="$B" > "$W/install.log" 2>&1 ||
        { cat "$W/install.log"; return 1; }
    local P=$stage$prefix
    for f in bin/tnbc bin/tnbc-analyze bin/tnbc-merge lib/libtnbc-trace.so lib/libtnbc-replay.so \
             lib/pkgconfig/tnbc-shmem.pc lib/pkgconfig/tnbc-profile.pc include/tnbc/profile.h \
             libexec/tnbc/tnbc-report libexec/tnbc/tnbc-timeline share/doc/tnbc/README.md \
             share/man/man1/tnbc-trace.1; do
        [[ -e $P/$f ]] || { echo "missing $f"; return 1; }
    done
    # No text file of the installed tree points back into the source tree.
    if grep -rlI "$ROOT" "$P/bin" "$P/lib" "$P/libexec"; then echo "names the source tree"; return 1; fi
    # The workflow from the staged tree (moved away from its PREFIX), outside
    # the source tree, with a copy of the program, and no TNBC_BUILD.
    local run=$W/outside; mkdir -p "$run"; cp "$AO" "$run/app"
    (
        cd "$run" && unset TNBC_BUILD &&
        "$P/bin/tnbc" trace -o run.db -- timeout -k 5 60 mpirun --oversubscribe -np 2 ./app alltoall 65536 1,0 4 > trace.out &&
        "$P/bin/tnbc" analyze run.db -o app.profile -q &&
        force_on app.profile on.profile &&
        "$P/bin/tnbc" run -p on.profile --summary rep.d -- timeout -k 5 60 mpirun --oversubscribe -np 2 ./app alltoall 65536 1,0 4 > tuned.out &&
        cmp "$W/plain.out" tuned.out &&
        "$P/bin/tnbc" timeline run.db rep.d -o t.json &&
        "$P/bin/tnbc" report run.db rep.d -p app.profile -o rep --format csv --no-plots > /dev/null &&
        PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags tnbc-profile | grep -q -- "-I$prefix/include/tnbc"
    ) || return 1
    # The replay summary says the early returns happened.
    [[ $(sqlite3 "$run/rep.d"/rank-000000.db "SELECT count(*) FROM call WHERE op='alltoall' AND wait_ns >= 0") -gt 0 ]] ||
        { echo "no early return recorded"; return 1; }
}
if command -v pkg-config > /dev/null && command -v sqlite3 > /dev/null; then
    T_TIMEOUT=180 t_run "install: make install DESTDIR=... then trace, analyze, run, timeline, report from there" installed
else
    t_skip "install" "pkg-config or sqlite3 not installed"
fi

# ---------------------------------------------------------------- MPICH

# The trace and replay libraries built against Debian's MPICH (make
# MPI=mpich, into build-mpich/), driven through MPICH's mpiexec (Hydra,
# settings as -genv): the C program's read order 1,0 is traced, the tuned
# run returns early and prints what the plain run prints, and a Fortran
# (`use mpi`) program's calls are traced at the program's own call sites.
MB=build-mpich$( [[ -n ${SAN:-} ]] && echo "-$SAN")
mpich() {
    make --no-print-directory -s MPI=mpich BUILD="$MB" "$MB/lib/libtnbc-trace.so" "$MB/lib/libtnbc-replay.so" \
        "$MB/bin/tnbc-analyze" "$MB/bin/tnbc-merge" "$MB/test/trace/access_order" \
        "$MB/test/trace/access_order_f" "$MB/test/trace/access_order_f08" > "$W/mpich-build.log" 2>&1 || { cat "$W/mpich-build.log"; return 1; }
    local m=$W/mpich run=(timeout -k 5 60 mpiexec.mpich -launcher fork -n 2)
    mkdir -p "$m" && cd "$m" || return 1
    export TNBC_BUILD=$ROOT/$MB
    "${run[@]}" "$ROOT/$MB/test/trace/access_order" alltoall 65536 1,0 4 > plain.out &&
        "$TNBC" trace -o run.db -- "${run[@]}" "$ROOT/$MB/test/trace/access_order" alltoall 65536 1,0 4 > /dev/null &&
        "$TNBC" analyze run.db -o app.profile -q && force_on app.profile on.profile &&
        "$TNBC" run -p on.profile --summary rep.d -- "${run[@]}" "$ROOT/$MB/test/trace/access_order" alltoall 65536 1,0 4 > tuned.out &&
        cmp plain.out tuned.out && "$TNBC" merge rep.db rep.d > /dev/null || return 1
    local order early
    order=$(sqlite3 run.db "SELECT DISTINCT o FROM (SELECT call_id, group_concat(idx) AS o FROM
        (SELECT t.call_id, t.idx FROM touch t JOIN call c USING (call_id) WHERE c.op = 'alltoall'
         AND t.side = 'recv' AND t.ord IS NOT NULL ORDER BY t.call_id, t.ord) GROUP BY call_id)")
    [[ $order == "1,0" ]] || { echo "read order traced under MPICH: '$order', expected 1,0"; return 1; }
    early=$(sqlite3 rep.db "SELECT count(*) FROM call WHERE op = 'alltoall' AND wait_ns >= 0")
    [[ $early -eq 8 ]] || { echo "$early early Alltoalls under MPICH, expected 8 (2 ranks x 4)"; return 1; }
    "$TNBC" trace -o f.db -- "${run[@]}" "$ROOT/$MB/test/trace/access_order_f" 1,0 3 > f.out 2>&1 &&
        grep -q 'access_order_f: ok' f.out || { cat f.out; return 1; }
    [[ $(sqlite3 f.db "SELECT count(*) || ' ' || min(site LIKE 'access_order_f+%') FROM call WHERE op = 'alltoall'") == "6 1" ]] ||
        { echo "Fortran under MPICH:"; sqlite3 f.db "SELECT rank, site, op FROM call"; return 1; }
    # use mpi_f08 under MPICH: its module procedures call the C MPI_Alltoall
    # from MPICH's own library, yet each of the program's two sites is its
    # own, with its own read order (the main program's 0,1, the
    # subroutine's backwards 1,0): before, both were libmpichfort's one site.
    "$TNBC" trace -o f08.db -- "${run[@]}" "$ROOT/$MB/test/trace/access_order_f08" 0,1 3 > f08.out 2>&1 &&
        grep -q 'access_order_f08: ok' f08.out || { cat f08.out; return 1; }
    local f08
    f08=$(sqlite3 f08.db "SELECT (site LIKE 'access_order_f08+%') || ' ' || group_concat(DISTINCT o) FROM
        (SELECT c.site, group_concat(t.idx) AS o FROM (SELECT call_id, idx FROM touch WHERE side = 'recv'
         AND ord IS NOT NULL ORDER BY call_id, ord) t JOIN call c USING (call_id) WHERE c.op = 'alltoall'
         GROUP BY c.call_id) GROUP BY site ORDER BY 1" | tr '\n' ';')
    [[ $f08 == "1 0,1;1 1,0;" ]] ||
        { echo "use mpi_f08 under MPICH: sites and orders '$f08', expected '1 0,1;1 1,0;'";
          sqlite3 f08.db "SELECT DISTINCT site, op FROM call"; return 1; }
    # Fortran MPI_IN_PLACE under MPICH, traced and tuned: 1+2, 2+3, 3+4, 4+5.
    mpifort.mpich -O2 -J "$m" "$ROOT/test/frontdoor/inplace_f.f90" -o inplace || return 1
    local sums="sum 3 5 7 9"
    [[ $("$TNBC" trace -o ip.db -- "${run[@]}" ./inplace 2>/dev/null | tr -s ' ' | sed 's/^ //') == "$sums" ]] ||
        { echo "Fortran MPI_IN_PLACE traced under MPICH: wrong sums"; return 1; }
    "$TNBC" analyze ip.db -o ip.profile -q && force_on ip.profile ipon.profile || return 1
    [[ $("$TNBC" run -p ipon.profile -- "${run[@]}" ./inplace 2>/dev/null | tr -s ' ' | sed 's/^ //') == "$sums" ]] ||
        { echo "Fortran MPI_IN_PLACE tuned under MPICH: wrong sums"; return 1; }
}
if command -v mpicc.mpich > /dev/null && command -v mpiexec.mpich > /dev/null && command -v sqlite3 > /dev/null; then
    T_TIMEOUT=300 t_run "MPICH: make MPI=mpich; trace, analyze, tuned run (identical), Fortran (use mpi, use mpi_f08) traced at its own sites via mpiexec -genv" mpich
else
    t_skip "MPICH" "mpicc.mpich or mpiexec.mpich not installed (Debian: libmpich-dev mpich; make deps)"
fi

# ---------------------------------------------------------------- licence

t_run "licence: LICENSE is BSD-3-Clause, kmod is GPL-2.0" \
    bash -c "grep -q 'BSD 3-Clause' LICENSE && grep -q 'GPL-2.0' LICENSE &&
             grep -rq 'MODULE_LICENSE(\"GPL v2\")' kmod/"
t_run "licence: every source file has an SPDX line (scripts/add-spdx --check)" scripts/add-spdx --check

t_summary
