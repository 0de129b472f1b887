#!/usr/bin/env bash
# The inference study (docs/validation/*-inference-study*.md): the settings the inference guides
# argue about, measured by infprof on the bundled samples, and each guide's claim held against
# the measurement. Every number in the study file comes from the databases this script writes
# (scripts/study_report.py reads them); run it again to regenerate.
#
#   scripts/study.sh [--gpu] [--out FILE] [--runs DIR]
#
# --gpu: ResNet-50 (TorchScript, torchvision, random weights) and a transformer encoder on
# CUDA at batch 1, 8 and 32, every grad mode and autocast precision, with eval() off, with
# channels_last and with cudnn.benchmark at batch 32. Without it: the same study at CPU sizes
# (a small conv net and transformer at batch 1 and 8, autocast off and bf16), minutes on CI's
# machine. Both then run each model's configurations as series inside one process
# (samples/py_series.py: batch sizes, channels_last, train(), cudnn.benchmark; an MLP in fp32 and,
# on CPU, dynamic int8). Needs a build (scripts/build.sh, or BUILD=DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
gpu=0 out="" runs=""
while [ $# -gt 0 ]; do
    case $1 in
    --gpu) gpu=1 ;;
    --out) out=$2; shift ;;
    --runs) runs=$2; shift ;;
    *) echo "usage: scripts/study.sh [--gpu] [--out FILE] [--runs DIR]" >&2; exit 2 ;;
    esac
    shift
done
date=$(date -u +%Y-%m-%d)
if [ $gpu = 1 ]; then
    out=${out:-docs/validation/$date-inference-study.md}
else
    out=${out:-docs/validation/$date-inference-study-cpu.md}
fi
runs=${runs:-$BUILD/study}
mkdir -p "$runs"
for p in infprof infprof-sample-infer infprof-sample-script; do
    [ -x "$BUILD/bin/$p" ] || { echo "study.sh: $BUILD/bin/$p not built (scripts/build.sh)" >&2; exit 2; }
done
# The first Python that has torch (a pyenv shim's python3 may not: Debian's is /usr/bin/python3).
PY=""
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
    [ -n "$p" ] && "$p" -c "import torch" 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "study.sh: no python3 with torch (set PYTHON)" >&2; exit 2; }

# One configuration: NAME, then the sample's command line.
run() {
    local name=$1
    shift
    echo "study.sh: $name" >&2
    rm -f "$runs/$name.db"
    "$BUILD/bin/infprof" run -o "$runs/$name.db" -- "$@" >"$runs/$name.out" 2>"$runs/$name.err"
    echo "$name $*" >>"$runs/index.txt"
}

: >"$runs/index.txt"
if [ $gpu = 1 ]; then
    model=$runs/resnet50.pt
    [ -s "$model" ] || "$PY" samples/torchvision_script.py --model resnet50 --out "$model" >/dev/null
    script=("$BUILD/bin/infprof-sample-script" "$model" --device cuda --iters 20)
    infer=("$BUILD/bin/infprof-sample-infer" --device cuda --model transformer --iters 20)
    # TorchScript calls carry no batch size: INFPROF_BATCH gives it (items/s).
    for b in 1 8 32; do
        INFPROF_BATCH=$b run "resnet50-b$b" "${script[@]}" --batch "$b"
        run "transformer-b$b" "${infer[@]}" --batch "$b"
    done
    export INFPROF_BATCH=32
    run resnet50-b32-noeval "${script[@]}" --batch 32 --no-eval
    run resnet50-b32-channels-last "${script[@]}" --batch 32 --channels-last
    run resnet50-b32-cudnn-benchmark "${script[@]}" --batch 32 --cudnn-benchmark
    unset INFPROF_BATCH
    run transformer-b32-noeval "${infer[@]}" --batch 32 --no-eval
    # Configurations as series in one process (one device state): batch, channels_last, train(),
    # cudnn.benchmark; an MLP at each batch (int8 is CPU only).
    run series-resnet50 "$PY" samples/py_series.py --device cuda --model resnet50 --batches 1,8,32
    run series-mlp "$PY" samples/py_series.py --device cuda --model mlp --batches 1,8,32
else
    conv=("$BUILD/bin/infprof-sample-infer" --model conv --iters 12 --image 32 --threads 2)
    infer=("$BUILD/bin/infprof-sample-infer" --model transformer --iters 12 --threads 2)
    for b in 1 8; do
        run "conv-b$b" "${conv[@]}" --batch "$b"
        run "transformer-b$b" "${infer[@]}" --batch "$b"
    done
    run conv-b8-noeval "${conv[@]}" --batch 8 --no-eval
    run conv-b8-channels-last "${conv[@]}" --batch 8 --channels-last
    # Configurations as series in one process: batch, channels_last, train(); fp32 against
    # dynamic int8 at each batch.
    run series-conv "$PY" samples/py_series.py --device cpu --model conv --iters 12 --batches 1,8,32
    run series-mlp "$PY" samples/py_series.py --device cpu --model mlp --iters 12 --batches 1,8,32
fi
BUILD=$BUILD "$PY" scripts/study_report.py "$runs" "$gpu" >"$out"
echo "study.sh: wrote $out" >&2
