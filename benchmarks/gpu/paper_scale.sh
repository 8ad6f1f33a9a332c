#!/bin/bash
# One device call of the paper-scale Figure 6 run, from the repository root (the device tool's `run`):
#   bash benchmarks/gpu/paper_scale.sh outputs/gpu/call1 540      # carry: ["outputs/gpu/call1"]
# CALL is the folder this call carried (benchmarks/gpu/prepare_paper_scale.py made it: caches/<role>/*.sgcache.xz and
# whl/, the wheels of pydantic and its needs, which the machine lacks); folders of earlier calls that a warm machine
# kept are used too. BUDGET: seconds for the training (the call's 600 s less a margin). Results go to $OUT
# (<config>.json per dataset, table.md, figure6.png, log.txt); finished cells are kept in /tmp/paper_scale, so a
# later call on the same machine trains only the cells not yet done. EXTRA: more flags for paper_scale.py
# (default --bf16; the CPU check here passes "--device cpu --epochs 1 --size 40").
set -uo pipefail
CALL=${1:?usage: paper_scale.sh CALL_FOLDER [BUDGET]}; BUDGET=${2:-540}
OUT=${OUT:-outputs/gpu/results}; PY=${PY:-python3}; EXTRA=${EXTRA:---bf16}; STATE=${STATE:-/tmp/paper_scale}
mkdir -p "$OUT"; exec > >(tee -a "$OUT/log.txt") 2>&1
if compgen -G "$CALL/whl/*.whl" > /dev/null; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$STATE/site" \
    "$CALL"/whl/*.whl || exit 3
  export PYTHONPATH=$STATE/site:$PWD
else
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1 || true
  $PY -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__)"; nproc; } | head -5
# shellcheck disable=SC2086
$PY benchmarks/gpu/paper_scale.py --carry "$(dirname "$CALL")" --budget "$BUDGET" --results "$OUT" \
  --state "$STATE" $EXTRA
