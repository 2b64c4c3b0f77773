#!/usr/bin/env bash
# Build .gpu_wheels/ for bench/gpu_run.sh: cp312 manylinux wheels of inspect-ai and of what the GPU machine's
# image lacks (its image has torch, transformers, numpy, pandas, scipy, rich, httpx, aiohttp, pyyaml, ...), plus
# the bundled default model's tokenizer files. The machine has no network, and what travels is capped (64 MiB),
# so two wheels are slimmed, keeping their code: inspect-ai without its sandbox-tool binaries and log-viewer
# bundle (an eval without sandboxes never runs them), botocore without its per-service API models (inspect
# imports only botocore.exceptions). Needs network here, once; the folder is git-ignored (.git/info/exclude).
#
#   [UPSTREAM_DIR=...] bench/gpu_wheels.sh   # -> .gpu_wheels/whl/*.whl, .gpu_wheels/tokenizer/ [, upstream/]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/.gpu_wheels"
PY="${PYTHON:-python3}"
ALL="$(mktemp -d)"
trap 'rm -rf "$ALL"' EXIT
"$PY" -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform manylinux1_x86_64 -d "$ALL" "inspect-ai==0.3.285" jsonschema
# the machine's image already has these (KINDS.md package list): not carried
ON_IMAGE="aiofiles aiohappyeyeballs aiohttp aiosignal attrs certifi charset_normalizer click frozenlist h11 httpcore
httpx idna jinja2 markdown_it_py mdurl multidict numpy propcache psutil pygments python_dateutil pyyaml regex requests
rich six tiktoken typing_extensions urllib3 wrapt yarl zipp
boto3 aiobotocore s3transfer s3fs jmespath aioitertools debugpy"  # last line: S3 logs and debugging, never imported here
rm -rf "$DEST/whl" && mkdir -p "$DEST/whl" "$DEST/tokenizer"
for whl in "$ALL"/*.whl; do
  name="$(basename "$whl" | cut -d- -f1 | tr 'A-Z' 'a-z')"
  case " $(echo $ON_IMAGE) " in *" $name "*) continue ;; esac
  cp "$whl" "$DEST/whl/"
done
slim() {  # slim WHEEL_GLOB PATH_PATTERN...: drop matching files from the wheel and its RECORD
  local whl; whl="$(ls "$DEST"/whl/$1)"; shift
  local dir; dir="$(mktemp -d)"
  (cd "$dir" && unzip -q "$whl")
  for pat in "$@"; do rm -rf "$dir"/$pat; done
  local record; record="$(ls "$dir"/*.dist-info/RECORD)"
  (cd "$dir" && while IFS= read -r line; do f="${line%%,*}"; [ -e "$f" ] || [ "${f##*/}" = RECORD ] && echo "$line"; done \
    < "$record" > "$record.new" && mv "$record.new" "$record" && rm -f "$whl" && zip -q -r -X "$whl" .)
  rm -rf "$dir"
}
slim 'inspect_ai-*.whl' 'inspect_ai/binaries/*' 'inspect_ai/_view/dist/*'
slim 'botocore-*.whl' 'botocore/data/*/'
"$PY" - "$DEST/tokenizer" <<'EOF'
import shutil, sys
from pathlib import Path
from stereoprobe.providers.default_model import default_model_dir
src = default_model_dir()
for name in ("tokenizer.json", "tokenizer_config.json", "chat_template.jinja"):
    if (src / name).is_file():
        shutil.copy(src / name, Path(sys.argv[1]) / name)
EOF
# upstream files the runs read (never committed; carried inside the git-ignored folder): the GlobalBias data
# of the end-to-end route and DBB's upstream prompts, from a mirror laid out as $STEREOPROBE_UPSTREAM_DIR
# (<source key>/<path>): UPSTREAM_DIR=/path/to/mirror bench/gpu_wheels.sh
if [ -n "${UPSTREAM_DIR:-}" ]; then
  rm -rf "$DEST/upstream" && mkdir -p "$DEST/upstream"
  for key in GlobalBias Hidden-Bias-Benchmark; do cp -r "$UPSTREAM_DIR/$key" "$DEST/upstream/$key"; done
  chmod -R u+w "$DEST/upstream"
fi
du -sh "$DEST"
