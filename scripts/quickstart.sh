#!/usr/bin/env bash
# Sets up (dependencies + build) and runs scenarios/quickstart.yaml on the
# embedded defaults (analytic cost model, built-in catalogue).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
exec "${SERVESIM_BUILD_DIR:-build}/servesim" run scenarios/quickstart.yaml "$@"
