#!/usr/bin/env bash
# Installs what infprof needs to build and test on Debian 12 (bookworm): a C compiler, CMake,
# Ninja, SQLite, and libtorch 1.13 (CPU) with Python torch/torchvision for the samples and tests;
# PIL makes the Python loop tests' images; pandas and protoc check the CSV and Perfetto exports;
# clang is CI's second compiler (ci_builds.sh); headless chromium renders the HTML report in tests,
# cmark-gfm (GitHub's Markdown) the Markdown one; pip, venv, setuptools and wheel build and install
# the Python package offline (tests/build/test_pip_install.py).
# CUDA 13 (headers, CUPTI, cuDNN) is expected where nvcc on the PATH points; it is not installed
# here. Idempotent: does nothing when everything is present.
set -euo pipefail
packages=(build-essential cmake ninja-build pkg-config libsqlite3-dev sqlite3 python3
          libtorch-dev python3-torch python3-torchvision python3-pil python3-pandas binutils xz-utils
          protobuf-compiler clang chromium cmark-gfm python3-pip python3-venv python3-setuptools
          python3-wheel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "scripts/deps.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "scripts/deps.sh: CUDA found in /usr/local/cuda (add /usr/local/cuda/bin to PATH)" >&2
fi
