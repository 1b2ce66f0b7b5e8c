#!/usr/bin/env bash
# Regenerates the scenario reference from the loader's schema table into
# docs/scenario-reference.md and the README's last section ("Scenario
# reference"), after a key or default changed. Needs a build (setup.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=${SERVESIM_BUILD_DIR:-build}/servesim
"$bin" schema > docs/scenario-reference.md
{
  sed '/^## Scenario reference$/,$d' README.md
  echo "## Scenario reference"
  # One heading level down, without the document title.
  "$bin" schema | sed '1{/^# Scenario reference$/d}' | sed 's/^#/##/'
} > README.md.new
mv README.md.new README.md
