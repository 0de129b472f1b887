#!/usr/bin/env bash
# The test command: dependencies, build, then every ctest test. GPU tests (label gpu) skip with a
# message on machines without a GPU; they never count as passed there.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
INFPROF_WERROR=ON scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
