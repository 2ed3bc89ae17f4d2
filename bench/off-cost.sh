#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What a profile whose every site is off costs (issue 16, "no cost when
# off"): isort and the micro-benchmark run plain and under `tnbc run -p`
# with a profile traced from the same program and then turned off site by
# site, interleaved rep by rep (bench/run-apps), on this machine (2 ranks)
# and on a 2 x 1 emulated cluster at 200 Mbit/s (the demo's network).
# Reports the paired ratio off/plain per app and place: with every site off
# the library must take no thread, no agreement and no private
# communicators, so the ratio is 1 within the pairs' spread.
# Environment: OUT (default build/bench/off-cost), REPS (default 7),
# PLACES (default "local cluster"), RATE (the cluster's links, default 200mbit).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export TNBC_BUILD=$PWD/${BUILD:-build}
OUT=${OUT:-$PWD/build/bench/off-cost} REPS=${REPS:-7} PLACES=${PLACES:-local cluster}
T=$PWD/scripts/tnbc C=$PWD/scripts/cluster/tnbc-cluster
NAME=off$$; NAME=${NAME:0:8}
rm -rf "$OUT" && mkdir -p "$OUT" || exit 1
cat > "$OUT/apps.conf" <<CONF
isort | isort | --keys 2097152 --maxkey 1048576 --iters 5
micro | microbench | --block 1048576 --iters 8 --tcurc-us 20000 --crc-us 4000
CONF
trap '"$C" down --name "$NAME" >/dev/null 2>&1' EXIT
trap 'exit 130' INT TERM

for place in $PLACES; do
    where=(--local)
    if [ "$place" = cluster ]; then
        "$C" up --name "$NAME" -n 2 --slots 1 --rate "${RATE:-200mbit}" >/dev/null || exit 1
        where=(--cluster "$NAME")
    fi
    bench/run-apps "${where[@]}" --np 2 --reps "$REPS" --config "$OUT/apps.conf" --apps isort,micro \
        --modes trace,plain,off --out "$OUT/$place" --tcomm-us 0 \
        --mode trace="$T trace -o $OUT/$place/{app}.db --" --mode-reps trace=1 \
        --after trace="$T analyze $OUT/$place/{app}.db -o $OUT/$place/{app}.profile >/dev/null &&
            sed -E 's/^  decision on .*/  decision off turned off by bench\/off-cost.sh/' \
            $OUT/$place/{app}.profile > $OUT/$place/{app}.off.profile" \
        --mode off="$T run -p $OUT/$place/{app}.off.profile --" > "$OUT/$place.log" || exit 1
    /usr/bin/python3 - "$OUT/$place/runs.csv" "$place" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    if r["rc"] != "0" or r["check"] != "ok":
        sys.exit(f"off-cost: a run failed: {r['command']}")
    by.setdefault(r["app"], {}).setdefault(r["mode"], {})[r["rep"]] = 1e3 * float(r["t_total"])
for app, m in sorted(by.items()):
    reps = sorted(set(m.get("plain", {})) & set(m.get("off", {})))
    q = [m["off"][k] / m["plain"][k] for k in reps]
    print(f"{sys.argv[2]:8} {app:6} {len(q)} pairs  plain {statistics.median(m['plain'][k] for k in reps):8.2f} ms"
          f"  off {statistics.median(m['off'][k] for k in reps):8.2f} ms"
          f"  off/plain {statistics.median(q):.3f} [{min(q):.3f}, {max(q):.3f}]")
PY
    "$C" down --name "$NAME" >/dev/null 2>&1
done
