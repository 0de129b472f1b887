#!/usr/bin/env bash
# How tests/data/h200/energy-cpu.db.xz was made from ../shared/fixtures/h200 (a database recorded
# on an H200 by infprof at 3c4c875, README.md there): the same run, trimmed to what its energy,
# power, CPU time, series and warm-up figures read. Kernels, copies, sets, operators, tensor memory
# and cuDNN calls other than algorithm searches and plan builds go (the summaries written at the
# end stay).
#   tests/data/h200/trim.sh SRC.db OUT.db.xz
set -euo pipefail
src=$1 out=$2
tmp=$(mktemp -d)
cp "$src" "$tmp/x.db"
sqlite3 "$tmp/x.db" <<'SQL'
DELETE FROM tensor_memory; DELETE FROM torch_operators;
DELETE FROM cudnn_calls WHERE fn_id NOT IN (SELECT id FROM strings WHERE value LIKE 'cudnnFind%'
    OR value LIKE 'cudnnGet%Algorithm%' OR value = 'cudnnBackendFinalize');
DELETE FROM external_corr; DELETE FROM kernel_rows; DELETE FROM memcpy; DELETE FROM memset;
DELETE FROM cudnn_plans; DELETE FROM sync; DELETE FROM memory_segments;
VACUUM;
SQL
xz -9e -c "$tmp/x.db" >"$out"
rm -rf "$tmp"
