#!/usr/bin/env bash
# The GPU bench on a machine without network: install the carried wheels (inspect-ai and what the machine's
# image lacks) and this repository (no dependencies) into a target folder, then run bench/gpu_throughput.py.
#
#   bench/gpu_run.sh [bench arguments...]            # defaults: --quick, JSON and log under $OUT
#
# Folders: .gpu_wheels/whl (cp312 wheels), .gpu_wheels/tokenizer (the bundled default model's tokenizer files);
# build them with bench/gpu_wheels.sh. Environment: PYTHON (default python3), OUT (default ./gpu-out),
# GPU_SITE (the target folder, default /tmp/stereoprobe-site).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WHEELS="$ROOT/.gpu_wheels"
PY="${PYTHON:-python3}"
SITE="${GPU_SITE:-/tmp/stereoprobe-site}"
OUT="${OUT:-$ROOT/gpu-out}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 PIP_NO_INDEX=1
export TOKENIZERS_PARALLELISM=false
if [ -d "$WHEELS/upstream" ]; then export STEREOPROBE_UPSTREAM_DIR="$WHEELS/upstream"; fi  # pinned upstream files
for need in "$WHEELS/tokenizer/tokenizer.json" "$WHEELS/whl"; do
  [ -e "$need" ] || { echo "gpu_run.sh: $need is missing (run bench/gpu_wheels.sh, and carry .gpu_wheels)" >&2; exit 2; }
done
t0=$(date +%s)
if command -v nvidia-smi > /dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,utilization.gpu --format=csv | tee "$OUT/gpu.txt"
fi
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/whl/*.whl
# the repository itself, laid out as setup.py installs it (tasks/, solvers/, scorers/, datasets/ inside the
# stereoprobe package) with its dist-info (inspect's entry point): no build step, so no setuptools version
# of the machine's image matters
rm -rf "$SITE/stereoprobe" "$SITE"/stereoprobe-*.dist-info
cp -r "$ROOT/stereoprobe" "$SITE/stereoprobe"
for part in tasks solvers scorers datasets; do
  rm -rf "$SITE/stereoprobe/$part" && cp -r "$ROOT/$part" "$SITE/stereoprobe/$part"
done
find "$SITE/stereoprobe" -name __pycache__ -prune -exec rm -rf {} +
VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/pyproject.toml" | head -1)"
DIST="$SITE/stereoprobe-$VERSION.dist-info"
mkdir -p "$DIST"
printf 'Metadata-Version: 2.1\nName: stereoprobe\nVersion: %s\n' "$VERSION" > "$DIST/METADATA"
printf '[console_scripts]\nstereoprobe = stereoprobe.cli:main\n\n[inspect_ai]\nstereoprobe = stereoprobe._registry\n' \
  > "$DIST/entry_points.txt"
printf 'stereoprobe\n' > "$DIST/top_level.txt"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
echo "gpu_run.sh: installed in $(( $(date +%s) - t0 )) s; $("$PY" -c 'import sys, torch, transformers, inspect_ai; print(sys.version.split()[0], "torch", torch.__version__, "transformers", transformers.__version__, "inspect_ai", inspect_ai.__version__)')"
cd "$OUT"  # inspect's logs and caches stay out of the repository
set -o pipefail
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(--quick)
"$PY" "$ROOT/bench/gpu_throughput.py" --tokenizer "$WHEELS/tokenizer" --json "$OUT/gpu.json" "${ARGS[@]}" 2>&1 \
  | tee "$OUT/bench.log"
