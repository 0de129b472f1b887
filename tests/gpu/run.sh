#!/usr/bin/env bash
# tests/gpu/run.sh: the GPU suite, for a machine with an NVIDIA GPU (CUDA 13, nvcc, cmake,
# ninja; PyTorch for libtorch when present). It builds everything, runs ctest (the gpu-labelled
# tests run instead of skipping), the launch-overhead benchmark and the checks under other CUDA
# tools, and writes what it saw under $OUT (at most 16 files):
#
#   summary.md          one line per step: status, seconds, note
#   environment.txt     GPU, driver, CUDA, CUPTI, PyTorch versions
#   build.log           configure and build output
#   ctest.log           the whole ctest run
#   gpu_tests.md        tables the gpu tests wrote (kernels, copies, durations vs CUDA events)
#   launch_overhead.txt infprof-launch-bench output
#   overhead.md         bench/overhead.py: plain, the floor tracer, infprof and its switches
#   attribution.md      INFPROF_ATTRIBUTION=records against the callbacks: the same kernels,
#                       time, iterations and cuDNN calls per phase, on three programs
#   lossless.md         three programs at defaults: nothing dropped, every phase and iteration;
#                       the allocator's reports folded against one row per report, on CUDA
#   truth.md            p50 latency against each sample's own timing, every phase
#   study.md, study.log the inference study at GPU sizes (scripts/study.sh --gpu)
#   systems.md          CUDA graph attribution; the advice rules on the study's configurations
#   compiled.md         iterations from record_function scopes, torch.compile and AOTInductor:
#                       sources, p50 against the program's own, Triton share, the Autocast line
#   tools.md            the CUDA sample under compute-sanitizer / ncu with infprof preloaded
#   samples.md          the libtorch conv net on CUDA (eval on and off): infprof's report and
#                       cuDNN calls, and how libtorch_cuda binds cuDNN (readelf)
#
# Usage: tests/gpu/run.sh            (OUT defaults to out/gpu, BUILD to build-gpu; STEPS="20 30"
#                                    runs only those steps)
# Adding a check: write one function named step_NN_name (NN orders the steps). It runs in the
# repository root, may use $BUILD, $OUT and note "text" (a line for summary.md), and returns
# non-zero on failure; later steps still run. The exit status is 1 if any step failed.
# Steps are called through the loop at the bottom, not by name:
# shellcheck disable=SC2317
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
OUT=${OUT:-$ROOT/out/gpu}
mkdir -p "$OUT"
LIB=$BUILD/lib/libinfprof.so
NOTE=""

note() { NOTE="${NOTE:+$NOTE; }$*"; }

# ---- steps ------------------------------------------------------------------------------------

step_10_environment() {
    {
        echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "host: $(uname -srm)"
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader \
            2>&1 | sed 's/^/gpu: /'
        nvcc --version 2>&1 | tail -1 | sed 's/^/nvcc: /'
        find /usr/local/cuda/lib64/ /usr/local/cuda/extras/CUPTI/lib64/ -name 'libcupti.so.*' \
            2>/dev/null | sed 's/^/libcupti: /'
        cmake --version | head -1
        python3 -c 'import torch; print("torch:", torch.__version__, "cuda", torch.version.cuda)' \
            2>&1 | tail -1
        git -C "$ROOT" log -1 --format='commit: %H %s' 2>/dev/null
    } >"$OUT/environment.txt"
    note "$(grep '^gpu:' "$OUT/environment.txt" | head -1)"
    grep -q '^gpu: ' "$OUT/environment.txt" && ! grep -qi 'failed\|not found' "$OUT/environment.txt"
}

step_20_build() {
    local torch_prefix args=()
    torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
    [ -n "$torch_prefix" ] && args+=("-DCMAKE_PREFIX_PATH=$torch_prefix")
    {
        cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${args[@]}" &&
            cmake --build "$BUILD"
    } >"$OUT/build.log" 2>&1
    local rc=$?
    [ -x "$BUILD/samples/cuda_sample" ] || note "cuda_sample not built"
    return "$rc"
}

step_30_ctest() {
    # A hang costs one test's 240 s, not the session (2026-11-25: one test took all 10 minutes).
    (cd "$BUILD" && INFPROF_GPU_OUT="$OUT" ctest --output-on-failure --timeout 240 \
        -j "${CTEST_PARALLEL_LEVEL:-8}") \
        >"$OUT/ctest.log" 2>&1
    local rc=$?
    note "$(grep -E 'tests passed|tests failed' "$OUT/ctest.log" | tail -1)"
    local skipped
    skipped=$(grep -c '(Skipped)$' "$OUT/ctest.log")
    [ "$skipped" -gt 0 ] && note "$skipped skipped (see ctest.log)"
    # On a GPU machine a skipped gpu test is a failure of this suite.
    if grep -E '^\s+[0-9]+ - gpu\.' "$OUT/ctest.log" | grep -q 'Skipped'; then
        note "gpu tests skipped on a GPU machine"
        return 1
    fi
    return "$rc"
}

step_40_launch_overhead() {
    "$BUILD/bin/infprof-launch-bench" --lib "$LIB" --runs 7 --no-api \
        >"$OUT/launch_overhead.txt" 2>&1
    local rc=$?
    if [ "$rc" = 0 ]; then
        note "$(grep -E '^(added_ns_per_launch|meets_goal)' "$OUT/launch_overhead.txt" |
            tr '\n' ' ')"
    else
        note "$(tail -1 "$OUT/launch_overhead.txt")"
    fi
    return "$rc"
}

# What infprof costs against the floor tracer (bench/overhead.py), the launch benchmark and the
# TorchScript ResNet-50 at batch 1 and 32. Tables in overhead.md.
OVERHEAD_REPS=${OVERHEAD_REPS:-5}
step_45_overhead() {
    local rc=0 model
    {
        echo "# Overhead against the floor tracer"
        echo
        [[ " ${OVERHEAD_WORKLOADS:-launch script python} " == *" launch "* ]] &&
            { python3 "$ROOT/bench/overhead.py" launch --build "$BUILD" --reps "$OVERHEAD_REPS" \
                ${OVERHEAD_VARIANTS:+--variants "$OVERHEAD_VARIANTS"} || rc=1; }
        model=$(resnet50_script) || { echo "no ResNet-50 TorchScript file"; return 1; }
        for batch in ${OVERHEAD_BATCHES:-1 32}; do
            echo
            python3 "$ROOT/bench/overhead.py" script "$model" "$batch" --build "$BUILD" \
                --reps "$OVERHEAD_REPS" --iters 30 \
                ${OVERHEAD_VARIANTS:+--variants "$OVERHEAD_VARIANTS"} || rc=1
        done
        echo
        [[ " ${OVERHEAD_WORKLOADS:-launch script python} " == *" python "* ]] &&
            { python3 "$ROOT/bench/overhead.py" python 1 --build "$BUILD" --reps "$OVERHEAD_REPS" \
                --iters 40 ${OVERHEAD_VARIANTS:+--variants "$OVERHEAD_VARIANTS,torch.profiler"} ||
                rc=1; }
    } >"$OUT/overhead.md" 2>&1
    note "$(grep -E '^\| infprof \|' "$OUT/overhead.md" | cut -d'|' -f5,7 | tr '\n' ';')"
    return "$rc"
}

# torchvision's ResNet-50 as TorchScript (random weights), written once into the build folder.
resnet50_script() {
    local model=$BUILD/models/resnet50.pt
    if [ ! -s "$model" ]; then
        mkdir -p "$BUILD/models"
        python3 "$ROOT/samples/torchvision_script.py" --model resnet50 --out "$model" \
            >/dev/null 2>&1 || return 1
    fi
    echo "$model"
}

# The sample under another CUDA tool that injects itself: infprof must step aside (passive, one
# line on stderr) and the sample must run and print the same as under the tool alone.
# Attribution from API records (INFPROF_ATTRIBUTION=records, no launch callback) against the
# launch callbacks: each program twice, every phase's kernels, kernel time, iterations and
# cuDNN-linked kernels compared (1%), records mode leaving nothing unattributed.
step_46_attribution() {
    local dir=$BUILD/runs rc=0 model mode
    mkdir -p "$dir"
    model=$(resnet50_script) || { note "no ResNet-50 TorchScript file"; return 1; }
    {
        echo "# Attribution: launch callbacks / API records (INFPROF_ATTRIBUTION)"
        echo
        echo "| program | phase | kernels | kernel ms | iterations | cuDNN-linked kernels | |"
        echo "|---|---|---:|---:|---:|---:|---|"
        for mode in callbacks records; do
            INFPROF_ATTRIBUTION=$mode run_sample "attr-script-$mode" \
                "$BUILD/bin/infprof-sample-script" "$model" --device cuda --batch 1 --iters 20 \
                --precisions off,bf16 || rc=1
            INFPROF_ATTRIBUTION=$mode run_sample "attr-conv-$mode" \
                "$BUILD/bin/infprof-sample-infer" --device cuda --model conv --batch 32 \
                --iters 20 || rc=1
            INFPROF_ATTRIBUTION=$mode run_sample "attr-python-$mode" python3 \
                "$ROOT/samples/py_infer.py" --device cuda --model resnet50 --batch 1 --iters 20 \
                --precisions off,bf16 || rc=1
        done
        for run in script conv python; do
            BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" attribution "$run" \
                "$dir/attr-$run-callbacks.db" "$dir/attr-$run-records.db" || rc=1
        done
    } >"$OUT/attribution.md" 2>&1
    note "$(grep -c '| ok |' "$OUT/attribution.md") rows agree, $(grep -c FAILED \
        "$OUT/attribution.md") not"
    return "$rc"
}

step_50_other_tools() {
    local sample=$BUILD/samples/cuda_sample dir rc=0
    dir=$(mktemp -d)
    echo "# The CUDA sample under other CUDA tools, infprof preloaded into the sample" \
        >"$OUT/tools.md"
    local tool
    for tool in "compute-sanitizer --tool memcheck" "ncu --kernel-name k_spin --launch-count 1"; do
        local exe=${tool%% *}
        if ! command -v "$exe" >/dev/null; then
            printf '\n## %s\n\nnot installed\n' "$tool" >>"$OUT/tools.md"
            note "$exe not installed"
            continue
        fi
        # shellcheck disable=SC2086
        $tool "$sample" >"$dir/alone.out" 2>"$dir/alone.err"
        local alone=$?
        # Preloaded into the sample only, in front of whatever the tool itself preloads.
        # shellcheck disable=SC2086,SC2016
        INFPROF_OUTPUT="$dir/under-%p.db" $tool sh -c \
            'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec "$1"' "$LIB" "$sample" \
            >"$dir/with.out" 2>"$dir/with.err"
        local with=$?
        local status="" db
        for db in "$dir"/under-*.db; do
            [ -e "$db" ] || continue
            status+=$(sqlite3 "$db" "SELECT value FROM meta WHERE key = 'collector.cupti'" \
                2>/dev/null)" "
        done
        {
            printf '\n## %s\n\n' "$tool"
            echo "- exit status alone $alone, with infprof $with"
            echo "- collector.cupti: ${status:-no database}"
            echo "- infprof lines on stderr: $(grep -c '^infprof:' "$dir/with.err")"
            echo '```'
            grep '^infprof:' "$dir/with.err"
            echo '```'
        } >>"$OUT/tools.md"
        # Passive, and the other tool named (compute-sanitizer gives CUPTI no name of its own).
        [ "$alone" = "$with" ] && [[ $status == passive:* ]] && [[ $status != *"not provided"* ]] &&
            [[ $status != *"gave no name"* ]] || rc=1
        rm -f "$dir"/under-*.db
    done
    rm -rf "$dir"
    return "$rc"
}

# The libtorch conv net on CUDA under infprof, with eval() and without (batch-norm inference vs
# training calls, convolutions per iteration, kernels linked to their cuDNN calls), and the
# version node libtorch_cuda binds cuDNN symbols to (docs/cudnn.md).
step_60_torch_samples() {
    local infer=$BUILD/bin/infprof-sample-infer dir rc=0 lib
    if [ ! -x "$infer" ]; then
        note "no libtorch sample (libtorch not found at build time)"
        return 1
    fi
    dir=$(mktemp -d)
    {
        echo "# The libtorch samples on CUDA"
        lib=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__),
"lib", "libtorch_cuda.so"))' 2>/dev/null)
        printf '\n## cuDNN symbols libtorch_cuda binds\n\n```\n'
        if [ -n "$lib" ] && [ -e "$lib" ]; then
            readelf -d "$lib" | grep -i 'cudnn' | head -5
            readelf -V -W "$lib" | grep -A3 'libcudnn' | head -12
        else
            echo "libtorch_cuda.so not found"
        fi
        printf '```\n'
        local eval_flag
        for eval_flag in "" "--no-eval"; do
            printf '\n## conv net, CUDA, batch 32%s\n\n' "${eval_flag:+, $eval_flag}"
            # shellcheck disable=SC2086
            "$BUILD/bin/infprof" run -o "$dir/conv.db" --force -- "$infer" --device cuda \
                --model conv --batch 32 --iters 20 $eval_flag >"$dir/sample.out" 2>&1 || rc=1
            echo '```'
            grep '^ref ' "$dir/sample.out"
            echo '```'
            "$BUILD/bin/infprof" report --format md --top 10 "$dir/conv.db" || rc=1
        done
    } >"$OUT/samples.md" 2>&1
    rm -rf "$dir"
    note "conv net on CUDA, eval on and off"
    return "$rc"
}

# Nothing lost under real load (docs/validation): three programs at default settings, each
# phase and each iteration there, no event dropped; then the event path benchmark.
step_70_lossless() {
    local dir rc=0 model py
    dir=$BUILD/runs
    mkdir -p "$dir"
    model=$(resnet50_script) || { note "no ResNet-50 TorchScript file"; return 1; }
    py=(python3 "$ROOT/samples/py_infer.py" --device cuda --model resnet50 --batch 1 --iters 100
        --precisions off,bf16)
    {
        echo "# Nothing lost: three programs at default settings"
        echo
        echo "| program | events | dropped | waited (ms) | buffer peak (MiB) | phases |"\
             "exact iterations | |"
        echo "|---|---:|---:|---:|---:|---|---|---|"
        run_sample script-b32-9 "$BUILD/bin/infprof-sample-script" "$model" --device cuda \
            --batch 32 --iters 20 || rc=1
        run_sample script-b32-6 "$BUILD/bin/infprof-sample-script" "$model" --device cuda \
            --batch 32 --iters 20 --precisions off,bf16 || rc=1
        run_sample python-eager-b1 "${py[@]}" || rc=1
        for run in script-b32-9 script-b32-6 python-eager-b1; do
            BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" lossless "$run" "$dir/$run.db" \
                "$dir/$run.out" || rc=1
        done
        printf '\n## infprof-bench burst (8 threads, 2 s)\n\n```\n'
        "$BUILD/bin/infprof-bench" burst --threads 8 --seconds 2
        printf '```\n'
    } >"$OUT/lossless.md" 2>&1
    note "$(grep -c '| ok |' "$OUT/lossless.md") of 3 programs lossless"
    return "$rc"
}

# A sample under infprof, into $BUILD/runs/NAME.db with its stdout in NAME.out.
run_sample() {
    local name=$1 dir=$BUILD/runs
    shift
    rm -f "$dir/$name.db"
    "$BUILD/bin/infprof" run -o "$dir/$name.db" -- "$@" >"$dir/$name.out" 2>"$dir/$name.err"
}

# The allocator's reports folded per forward against one row per report, on CUDA: the same memory
# figures (docs/libtorch.md "Reports folded per forward"; verified on the CPU only before).
# Appended to lossless.md (the suite writes at most 16 files).
step_72_memfold() {
    mkdir -p "$BUILD/runs"
    local log=$BUILD/runs/memfold.md rc
    BUILD=$BUILD python3 "$ROOT/tests/gpu/memfold_cuda.py" "$BUILD/runs" >"$log" 2>&1
    rc=$?
    { echo; cat "$log"; } >>"$OUT/lossless.md"
    note "$(grep -c '| ok |' "$log") of 5 figures the same folded"
    return "$rc"
}

# The report's p50 (to GPU completion) against each sample's own forward + synchronize timing,
# every phase, async forwards included: within 2%.
step_75_truth() {
    local dir=$BUILD/runs rc=0
    {
        echo "# p50 latency: infprof against the program's own timing"
        echo
        echo "| program | phase | program p50 (ms) | infprof p50 (ms) | difference |"\
             "steady p50 | host p50 | warm-up | |"
        echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
        [ -f "$dir/script-b32-9.db" ] || run_sample script-b32-9 "$BUILD/bin/infprof-sample-script" \
            "$(resnet50_script)" --device cuda --batch 32 --iters 20
        BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" truth resnet50-script-b32 \
            "$dir/script-b32-9.db" "$dir/script-b32-9.out" || rc=1
        for model in conv transformer; do
            run_sample "infer-$model" "$BUILD/bin/infprof-sample-infer" --device cuda \
                --model "$model" --batch 32 --iters 20 || rc=1
            BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" truth "infer-$model" \
                "$dir/infer-$model.db" "$dir/infer-$model.out" || rc=1
        done
    } >"$OUT/truth.md" 2>&1
    note "$(grep -c '| ok |' "$OUT/truth.md") phases within 2%, $(grep -c FAILED "$OUT/truth.md") not"
    return "$rc"
}

# The seeds' systems (issue "seeds' systems"): CUDA graph replays attributed to their phase and
# iteration (Python, torch.cuda.graphs), and the advice rules on the study's configurations.
step_80_systems() {
    local dir=$BUILD/runs rc=0
    mkdir -p "$dir"
    {
        echo "# CUDA graphs: replayed kernels in their phase and iteration"
        echo
        echo "| program | phase | iterations | graph kernels | iterations with GPU work |"\
             "program p50 (ms) | infprof p50 (ms) | |"
        echo "|---|---|---|---:|---:|---:|---:|---|"
        run_sample py-graph python3 "$ROOT/samples/py_infer.py" --device cuda --model resnet50 \
            --batch 8 --iters 20 --modes no_grad,inference_mode --precisions off --cuda-graph ||
            rc=1
        BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" graphs py-graph "$dir/py-graph.db" \
            "$dir/py-graph.out" || rc=1
        printf '\n# Advice rules on the study configurations\n\n| configuration | rules fired |\n'
        printf '|---|---|\n'
        for db in "$BUILD"/study/*.db; do
            [ -e "$db" ] || continue
            BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" advice "$(basename "$db" .db)" "$db"
        done
    } >"$OUT/systems.md" 2>&1
    note "CUDA graphs $(grep -c '| ok |' "$OUT/systems.md") phases ok"
    return "$rc"
}

# Iterations from signals other than NVTX (record_function scopes, AOTInductor runs) and a
# torch.compile'd model (Triton kernels: unknown type, said so). Unverified until this step ran.
step_82_compiled() {
    local dir=$BUILD/runs rc=0
    {
        echo "# Iterations from record_function, torch.compile, AOTInductor"
        echo
        echo "| program | phase | iterations by source | iterations | program p50 (ms) |"\
             "infprof p50 (ms) | difference | Triton time | |"
        echo "|---|---|---|---|---:|---:|---:|---:|---|"
        run_sample py-scope python3 "$ROOT/samples/py_infer.py" --device cuda --model resnet18 \
            --batch 8 --iters 20 --mark record_function || rc=1
        BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" iters py-record-function \
            "$dir/py-scope.db" "$dir/py-scope.out" || rc=1
        run_sample py-compile python3 "$ROOT/samples/py_infer.py" --device cuda --model resnet18 \
            --batch 8 --iters 20 --warmup 5 --compile || rc=1
        BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" iters py-torch-compile \
            "$dir/py-compile.db" "$dir/py-compile.out" || rc=1
        # Compiled once without infprof (Inductor runs a C++ compiler and autotunes), then run.
        rm -f "$dir/resnet18.pt2"
        python3 "$ROOT/samples/py_aoti.py" "$dir/resnet18.pt2" --device cuda --model resnet18 \
            --batch 8 --iters 1 --warmup 0 >"$dir/py-aoti-compile.log" 2>&1 || rc=1
        run_sample py-aoti python3 "$ROOT/samples/py_aoti.py" "$dir/resnet18.pt2" --device cuda \
            --model resnet18 --batch 8 --iters 20 || rc=1
        BUILD=$BUILD python3 "$ROOT/tests/gpu/tables.py" iters py-aotinductor \
            "$dir/py-aoti.db" "$dir/py-aoti.out" || rc=1
        tail -n 5 "$dir/py-compile.err" "$dir/py-aoti.err"
    } >"$OUT/compiled.md" 2>&1
    note "$(grep -c '| ok |' "$OUT/compiled.md") phases ok"
    return "$rc"
}

# The inference study at GPU sizes (scripts/study.sh --gpu), before step 80 reads its databases.
step_78_study() {
    BUILD=$BUILD "$ROOT/scripts/study.sh" --gpu --runs "$BUILD/study" --out "$OUT/study.md" \
        >"$OUT/study.log" 2>&1
    local rc=$?
    note "$(grep -c '^| ' "$OUT/study.md" 2>/dev/null) table rows"
    return "$rc"
}

# ---- driver -----------------------------------------------------------------------------------

cd "$ROOT" || exit 1
{
    echo "# GPU suite, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "| step | status | seconds | note |"
    echo "|---|---|---:|---|"
} >"$OUT/summary.md"
failed=0
# STEPS="20 30": only the steps whose numbers are listed (all by default).
for step in $(declare -F | awk '{print $3}' | grep '^step_' | sort); do
    num=${step#step_}
    num=${num%%_*}
    [ -n "${STEPS:-}" ] && [[ " $STEPS " != *" $num "* ]] && continue
    NOTE=""
    start=$(date +%s)
    echo "run.sh: $step" >&2
    if "$step"; then status=ok; else status=FAILED; failed=1; fi
    echo "| ${step#step_} | $status | $(($(date +%s) - start)) | ${NOTE//|/\\|} |" \
        >>"$OUT/summary.md"
done
cat "$OUT/summary.md"
exit $failed
