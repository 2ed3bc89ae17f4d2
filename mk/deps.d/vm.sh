#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Fetch Debian's 6.1 kernel image for the VM bench and extract it under
# build/vm/ (never installed on the host), index its modules and build the
# bench's initramfs. Idempotent: returns at once when build/vm/KVER exists.
set -euo pipefail
cd "$(dirname "$0")/../.."
exec scripts/vm/fetch-kernel
