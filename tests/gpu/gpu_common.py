"""What the GPU tests share: skip (exit 77, one clear line) where there is no device or the
program under test was not built, and append result tables for tests/gpu/run.sh to collect
($INFPROF_GPU_OUT/gpu_tests.md)."""
import os
import subprocess
import sys

from harness import BUILD, prog


def skip(why):
    print(f"SKIP: {why}", file=sys.stderr)
    sys.exit(77)


def require_gpu(*programs):
    """Exit 77 unless every program exists and the CUDA runtime sees a device."""
    for p in programs:
        if not os.path.exists(p):
            skip(f"{p} was not built (no CUDA compiler when configuring?)")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "CUDA_INJECTION64_PATH") and not k.startswith("INFPROF_")}
    r = subprocess.run([prog("cudart_probe")], capture_output=True, env=env, timeout=120)
    if r.returncode != 0 or b": ok," not in r.stdout:
        skip("no CUDA device here (cudart_probe: %s)" % r.stdout.decode().strip())


def sample(name):
    return os.path.join(BUILD, "samples", name)


def write_section(title, lines):
    """Append a Markdown section to $INFPROF_GPU_OUT/gpu_tests.md (when run.sh asked for it)."""
    out = os.environ.get("INFPROF_GPU_OUT")
    if not out:
        return
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gpu_tests.md"), "a") as f:
        f.write(f"## {title}\n\n" + "\n".join(lines) + "\n\n")
