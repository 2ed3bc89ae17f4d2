#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install the Debian packages listed in mk/deps.d/*.txt that are not installed.
# Idempotent and quick when everything is present (one dpkg-query).
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t wanted < <(cat mk/deps.d/*.txt | sed 's/#.*//' | awk 'NF {print $1}' | sort -u)
missing=()
for pkg in "${wanted[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
run_hooks() {
    # Component-specific set-up steps (e.g. an extracted guest kernel); each is
    # idempotent and returns at once when its work is already done.
    local hook
    for hook in mk/deps.d/*.sh; do
        [[ -e "$hook" ]] || continue
        bash "$hook" || { echo "deps: $hook failed" >&2; exit 1; }
    done
}
if ((${#missing[@]} == 0)); then
    echo "deps: all ${#wanted[@]} Debian packages present"
    run_hooks
    exit 0
fi
echo "deps: missing: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
    echo "deps: not root; run: sudo apt-get install -y ${missing[*]}  (or: sudo make deps)" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q --no-install-recommends "${missing[@]}"
run_hooks
echo "deps: installed ${#missing[@]} package(s)"
