#!/bin/bash
# SPARE3D Figure 6 cells on a GPU machine (the device tool's `run`), from the repository root of a checkout:
#   bash benchmarks/gpu/figure6.sh smoke            # 1 epoch of each Isometric-to-Pose cell: questions/s, that it runs
#   bash benchmarks/gpu/figure6.sh real 50 i2p p2i  # 50 epochs of the I2P cells, then the P2I binary cells
# Reads outputs/gpu/data.tar.gz (benchmarks/gpu/trim_dataset.py's copy of the dataset: question tables and their PNGs)
# and outputs/gpu/whl/*.whl (pydantic and its needs, which the machine lacks: the task registry imports the config
# schema). Writes into $OUT (at most 8 files come back): device.txt, log.txt, one figure6-<group>.json/.md per group
# (pipelines/reproduce_spare3d_figure6.py's table) and runs.tar.gz (each cell's history.json and curve.png).
# Each group is its own pipeline run under `timeout`, so a slow group cannot take the results of the earlier ones
# with it; the feed's cache (decoded uint8 splits) is shared between them.
# PY, DATA, WHL and EXTRA (more pipeline flags, e.g. "--device cpu --size 40 --max-steps 2" to test on a CPU) can be
# set from outside.
# Preparing outputs/gpu/ here (outputs/ is git-ignored; name outputs/gpu in the call's carry):
#   python benchmarks/gpu/trim_dataset.py outputs/spare3d_i2p_small /tmp/gpu/data isometric_to_pose pose_to_isometric
#   tar -czf outputs/gpu/data.tar.gz -C /tmp/gpu data
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
#     -d outputs/gpu/whl pydantic==2.14.4 pydantic_core==2.50.5 annotated_types==0.8.0 typing_inspection==0.4.5 \
#     typing_extensions==4.16.0 aggdraw==1.4.1 \
#     matplotlib==3.11.2 contourpy==1.3.3 cycler==0.12.1 fonttools==4.68.0 kiwisolver==1.5.1 pyparsing==3.3.3 \
#     python-dateutil==4.0.0 tzdata==2026.6 packaging==26.4
# (aggdraw only for code before train-baseline stopped importing it; matplotlib and its needs draw curve.png and
# figure6.png since the charts moved to matplotlib)
set -uo pipefail
MODE=${1:-smoke}; EPOCHS=${2:-1}; shift 2 2>/dev/null || shift $#
GROUPS_=${*:-i2p}
OUT=${OUT:-/tmp/figure6_out}; PY=${PY:-python3}; DATA=${DATA:-outputs/gpu/data.tar.gz}; WHL=${WHL:-outputs/gpu/whl}
EXTRA=${EXTRA:---bf16}; BUDGET=${BUDGET:-540}  # seconds for all groups together (the call's limit less margin)
mkdir -p "$OUT"; exec > >(tee "$OUT/log.txt") 2>&1
start=$(date +%s)
if [ -d "$WHL" ]; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "$WHL"/*.whl || exit 3
  export PYTHONPATH=/tmp/site:$PWD
else
  export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}$PWD
fi
export PYTHONUNBUFFERED=1 SPARE_GEN_CACHE=/tmp/figure6_cache
work=/tmp/figure6_work; rm -rf "$work"; mkdir -p "$work"; tar -xf "$DATA" -C "$work" || exit 4
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
  $PY -c "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__,
torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'no cuda')"; nproc; } | tee "$OUT/device.txt"
[ "$MODE" = smoke ] && EPOCHS=1
for group in $GROUPS_; do
  case $group in
    i2p) cells="isometric_to_pose";;
    p2i) cells="pose_to_isometric:binary";;
    t3) cells="three_view_to_isometric:binary";;
    *) echo "unknown group $group"; exit 2;;
  esac
  left=$(( BUDGET - ($(date +%s) - start) ))
  [ $left -lt 20 ] && { echo "$group: skipped, ${left} s left"; continue; }
  echo "== $group ($cells): $EPOCHS epochs, at most $left s"
  timeout -k 5 $left $PY pipelines/reproduce_spare3d_figure6.py --dataset "$work/data" --dest "$work/f6-$group" \
    --cells $cells --epochs "$EPOCHS" --workers 8 $EXTRA
  echo "== $group: exit $? after $(( $(date +%s) - start )) s"
  for f in md json png; do [ -f "$work/f6-$group/figure6.$f" ] && cp "$work/f6-$group/figure6.$f" "$OUT/figure6-$group.$f"; done
  rm -f "$OUT"/figure6-*.png  # the chart is redrawn from the histories; 8 files come back at most
  (cd "$work" && tar -czf "$OUT/runs.tar.gz" --exclude=model.pt --exclude=predictions_test.csv f6-*/)
done
echo "done in $(( $(date +%s) - start )) s"
