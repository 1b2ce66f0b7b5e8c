#!/usr/bin/env bash
# Sets up (dependencies + build) and runs the whole test suite under ctest.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root/${SERVESIM_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" "$@"
