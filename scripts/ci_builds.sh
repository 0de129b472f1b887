#!/usr/bin/env bash
# The other builds CI checks besides scripts/test.sh's (RelWithDebInfo, GCC): Release and
# MinSizeRel with GCC, Debug with clang, each with warnings as errors; and Debug with
# AddressSanitizer and UndefinedBehaviorSanitizer, whose unit tier runs (the C unit programs and
# the report tier: the CLI over recorded databases, but test_shape, which preloads). The preloaded
# tiers are not run there: a sanitized library cannot be preloaded into an unsanitized program.
# Usage: scripts/ci_builds.sh [DIR]   (build folders under DIR, default build-ci/)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
root=${1:-build-ci}
targets=(infprof infprof_cli infprof-bench)
build() { # NAME CMAKE-ARGS...
    local name=$1
    shift
    echo "ci_builds: $name" >&2
    cmake -S . -B "$root/$name" -G Ninja -DINFPROF_WERROR=ON "$@" >/dev/null
    quiet cmake --build "$root/$name" --target "${targets[@]}"
}
quiet() { # a command's output only when it fails
    local log
    log=$(mktemp)
    "$@" >"$log" 2>&1 || { tail -40 "$log" >&2; rm -f "$log"; return 1; }
    rm -f "$log"
}
build release -DCMAKE_BUILD_TYPE=Release
build minsizerel -DCMAKE_BUILD_TYPE=MinSizeRel
if command -v clang >/dev/null; then
    CC=clang CXX=clang++ build clang-debug -DCMAKE_BUILD_TYPE=Debug
else
    echo "ci_builds: clang not found: the clang build is skipped" >&2
fi
echo "ci_builds: debug-asan (unit tier)" >&2
cmake -S . -B "$root/asan" -G Ninja -DINFPROF_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
    -DINFPROF_SANITIZE=address,undefined >/dev/null
quiet cmake --build "$root/asan"
(cd "$root/asan" && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$(nproc)" -R '^(core\.(stats|median|attrib|clock|classify_kernel_names|energy_queue)|report\.)' -E 'report\.test_shape')
