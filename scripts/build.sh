#!/usr/bin/env bash
# Configures and builds infprof into build/ (the layout of an install: build/lib, build/bin).
# INFPROF_WERROR=ON in the environment (scripts/test.sh, CI) makes warnings errors; the demo and a
# user's own build leave it off, so a newer compiler's new warning never breaks an install.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFPROF_WERROR="${INFPROF_WERROR:-OFF}" >/dev/null
cmake --build build
