"""Documents of the DBB lm-evaluation-harness tasks (``stereoprobe/lm_eval_tasks/dbb``) and their JSONL export
(``stereoprobe dbb-export-lm-eval``).

The docs carry the same question ids and fields as the inspect tasks, so S computed by lm-eval's
aggregation and by ``stereoprobe dbb`` refer to the same questions and test instances.

- ``mc``: two docs per question, one per option order (``a_first`` true/false), each a multiple-choice
  item over the answer letters ``a`` / ``b`` after our MCQ prompt; P(A) of a question is the mean over the
  two orders of p(letter of A) / (p(a) + p(b)) — the estimand of the inspect task's logprob mode with its
  default counterbalanced order (it reads the letter probabilities from the first generated token instead of
  scoring the letters as continuations; both use the chat template when lm-eval runs with
  ``--apply_chat_template``).
- ``sg``: one doc per question, the option sentences (both options, every variation) as continuations of
  the DBB-SG prompt; per-token NLL needs the continuation's token count, taken with the model's tokenizer
  (``tokenizer`` metadata) exactly as lm-eval splits context and continuation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stereoprobe.errors import InputError


def build_docs(variant: str, source: str | None = None, faithful: bool | None = None, seed: int = 0,
               categories: Any = None, limit_templates: int | None = None, templates: Any = None,
               variations: str | None = None, prompt: str = "upstream") -> list[dict[str, Any]]:
    """lm-eval docs of a DBB selection (same arguments and defaults as the inspect tasks ``dbb`` / ``dbb_sg``:
    the upstream data with the faithful expansion and upstream's prompt files unless ``source`` / ``faithful``
    / ``prompt`` say otherwise)."""
    from stereoprobe.dbb import questions as Q
    from stereoprobe.dbb import scoring as SC

    source = Q.DEFAULT_SOURCE if source is None else source
    faithful = Q.DEFAULT_FAITHFUL if faithful is None else faithful
    if variant == "mc":
        _, qs = Q.select_questions(source, faithful, seed, categories, limit_templates, templates)
        tmpl = SC.prompts(prompt, source)["mcq"]  # after the selection: a bad selection is the error shown
        docs = []
        for q in qs:
            for a_first in (True, False):
                first, second = (q.option_a, q.option_b) if a_first else (q.option_b, q.option_a)
                docs.append({"doc_id": f"{q.id}:{'AB' if a_first else 'BA'}", "question_id": q.id,
                             "template_id": q.template_id, "category": q.category,
                             "descriptor_type": q.type_label, "group": q.group, "concept_a": q.concept_a,
                             "concept_b": q.concept_b, "a_first": a_first,
                             "prompt": SC.mcq_prompt(q.context, first, second, tmpl)})
        return docs
    if variant == "sg":
        items, _ = Q.sg_selection(source, faithful, seed, categories, limit_templates, templates, variations,
                                  prompt=prompt)
        sep = SC.prompts("stereoprobe")["sg"]["separator"]  # the separator is ours under either wording
        return [{"doc_id": str(it.question.id), "question_id": str(it.question.id),
                 "template_id": it.question.template_id, "category": it.question.category,
                 "descriptor_type": it.question.type_label, "group": it.question.group,
                 "concept_a": it.question.concept_a, "concept_b": it.question.concept_b,
                 "prompt": it.prompt, "separator": sep, "options": [o for pair in it.options for o in pair]}
                for it in items]
    raise InputError(f"variant must be 'mc' or 'sg', got {variant!r}")


def write_jsonl(docs: list[dict[str, Any]], path: str | Path) -> Path:
    """Write docs as JSON lines (parent folders created); returns the path."""
    from stereoprobe.outputs import atomic_output_file

    path = Path(path)
    with atomic_output_file(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Docs written by :func:`write_jsonl` (the ``data_file`` metadata of the DBB lm-eval tasks), read by
    :func:`stereoprobe.inputs.lm_eval.read_jsonl`."""
    from stereoprobe.inputs.lm_eval import read_jsonl as read_json_lines

    path = Path(path)
    if not path.is_file():
        raise InputError(f"DBB lm-eval data file not found: {path} (write it with "
                         "`stereoprobe dbb-export-lm-eval --variant mc|sg --out FILE`)")
    return read_json_lines(path)
