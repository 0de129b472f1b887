#!/usr/bin/env bash
# The main job: dependencies, build, profile the bundled libtorch sample (every grad mode and
# precision the device supports) and print infprof's report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh
rm -f demo.db
build/bin/infprof run -o demo.db -- build/bin/infprof-sample-infer --model conv --iters 10 "$@"
build/bin/infprof report demo.db
