#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Extract Debian's 6.1 kernel headers (the ABI the VM bench boots) under
# build/kmod/ without installing them, so the DLMC module can be built with
#   make -C build/kmod/headers M=$PWD/kmod/dlmc
# Idempotent: returns at once when the tree is already there.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Same ABI as the VM bench: the current candidate of linux-headers-amd64.
abi=${DLMC_KABI:-}
if [[ -z "$abi" ]]; then
    abi=$(apt-cache show "linux-headers-amd64=$(apt-cache policy linux-headers-amd64 |
          awk '/Candidate:/ {print $2}')" 2>/dev/null |
          sed -n 's/^Depends: .*linux-headers-\([0-9.]*-[0-9]*\)-amd64.*/\1/p' | head -n 1)
fi
[[ -n "$abi" ]] || { echo "dlmc deps: cannot find linux-headers-amd64 in apt (apt-get update?)" >&2; exit 1; }

top=build/kmod
dest=$top/linux-headers-$abi-amd64
stamp=$top/.headers-$abi.done
[[ -f "$stamp" && -e "$top/headers/Makefile" ]] && exit 0

mkdir -p "$top/debs" "$top/root"
(
    cd "$top/debs"
    for p in "linux-headers-$abi-amd64" "linux-headers-$abi-common" linux-kbuild-6.1; do
        ls "${p}"_*.deb >/dev/null 2>&1 || apt-get download -q -o APT::Sandbox::User=root "$p" >/dev/null
    done
)
for deb in "$top"/debs/*.deb; do dpkg -x "$deb" "$top/root"; done

# The packages link to /usr/src/... and /usr/lib/linux-kbuild-6.1 absolutely;
# repoint every absolute link into the extracted root.
root=$(cd "$top/root" && pwd)
find "$root" -type l | while read -r l; do
    t=$(readlink "$l")
    if [[ "$t" == /* && -e "$root$t" ]]; then ln -sfn "$root$t" "$l"; fi
done
# The arch Makefile includes the common one by absolute path, too.
sed -i "s|^include /usr/src/|include $root/usr/src/|" "$root/usr/src/linux-headers-$abi-amd64/Makefile"
ln -sfn "$root/usr/src/linux-headers-$abi-amd64" "$top/headers"
echo "$abi" >"$top/kabi"
touch "$stamp"
echo "dlmc deps: kernel headers $abi extracted under $top/headers"
