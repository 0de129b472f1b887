#!/usr/bin/env bash
# The main job: dependencies, build, profile the bundled libtorch sample (every grad mode and
# precision the device supports) and print infprof's report. Set-up prints one line per step;
# what each step said goes to demo.log (shown if a step fails).
set -euo pipefail
cd "$(dirname "$0")/.."
log=demo.log
: >"$log"
step() {
    local what=$1
    shift
    printf '%s ... ' "$what" >&2
    if "$@" >>"$log" 2>&1; then
        echo "done" >&2
    else
        echo "failed (last lines of $log below)" >&2
        tail -20 "$log" >&2
        exit 1
    fi
}
step "installing what is missing (scripts/deps.sh)" scripts/deps.sh
step "building (scripts/build.sh)" scripts/build.sh
rm -f demo.db
step "profiling the libtorch sample (infprof-sample-infer, conv net)" \
    build/bin/infprof run -o demo.db -- build/bin/infprof-sample-infer --model conv --iters 10 "$@"
echo >&2
build/bin/infprof report demo.db
