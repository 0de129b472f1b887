#!/usr/bin/env bash
# How tests/data/h100/*.db.xz were made from ../shared/fixtures/h100 (databases recorded on an
# H100 by infprof at b8cdf66, schema 1; README.md there): the same run, trimmed to what the
# report reads. CUDA API rows are kept only for the calls that launched a kernel, copy or memset
# (they give each its thread and launch time); external correlations and NVTX ranges go.
#   tests/data/h100/trim.sh SRC.db OUT.db.xz
set -euo pipefail
src=$1 out=$2
tmp=$(mktemp -d)
cp "$src" "$tmp/x.db"
sqlite3 "$tmp/x.db" <<'SQL'
DELETE FROM cuda_api WHERE corr NOT IN (SELECT corr FROM kernel_rows UNION SELECT corr FROM memcpy
                                        UNION SELECT corr FROM memset);
DELETE FROM external_corr;
DELETE FROM nvtx_ranges;
VACUUM;
SQL
xz -9e -c "$tmp/x.db" >"$out"
rm -rf "$tmp"
