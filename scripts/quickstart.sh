#!/usr/bin/env bash
# Sets up (dependencies + build) and runs scenarios/quickstart.yaml on the
# embedded defaults (analytic cost model, built-in catalogue). Builds the
# servesim binary only (no tests, benchmarks or CUDA code: scripts/test.sh
# builds the tests, SERVESIM_CUDA=1 the GPU calibration backend).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
SERVESIM_TARGETS=${SERVESIM_TARGETS:-servesim} "$root/scripts/setup.sh"
cd "$root"
exec "${SERVESIM_BUILD_DIR:-build}/servesim" run scenarios/quickstart.yaml "$@"
