"""Documents of the DBB lm-evaluation-harness tasks (``stereoprobe/lm_eval_tasks/dbb``) and their export.

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


def build_docs(variant: str, source: str = "bundled", faithful: bool = False, seed: int = 0,
               categories: Any = None, limit_templates: int | None = None, templates: Any = None,
               variations: str | None = None) -> list[dict[str, Any]]:
    from stereoprobe.dbb import scoring as SC
    from stereoprobe.tasks.dbb import _questions, dbb_sg

    if variant == "mc":
        tmpl = SC.prompts()["mcq"]
        _, qs = _questions(source, bool(faithful), int(seed), categories, limit_templates, templates)
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
        task = dbb_sg(source=source, faithful=bool(faithful), variations=variations, seed=int(seed),
                      categories=categories, limit_templates=limit_templates, templates=templates)
        sep = SC.prompts()["sg"]["separator"]
        docs = []
        for s in task.dataset:
            md = s.metadata or {}
            docs.append({"doc_id": str(s.id), "question_id": str(s.id), "template_id": md["template_id"],
                         "category": md["category"], "descriptor_type": md["descriptor_type"],
                         "group": md["group"], "concept_a": md["concept_a"], "concept_b": md["concept_b"],
                         "prompt": md["sg_prompt"], "separator": sep,
                         "options": [o for pair in md["sg_options"] for o in pair]})
        return docs
    raise ValueError(f"variant must be 'mc' or 'sg', got {variant!r}")


def write_jsonl(docs: list[dict[str, Any]], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"DBB lm-eval data file not found: {path} (write it with "
                                "`stereoprobe dbb-export-lm-eval --variant mc|sg --out FILE`)")
    out = []
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f, start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{path}: line {i}: not JSON ({e})") from e
    return out


def register(sub: Any) -> None:
    """``stereoprobe dbb-export-lm-eval``: write the lm-eval docs of a DBB selection to a JSONL file."""
    p = sub.add_parser("dbb-export-lm-eval", help="write DBB docs for the lm-eval tasks (dbb_mc, dbb_sg) to JSONL")
    p.add_argument("--variant", choices=["mc", "sg"], required=True)
    p.add_argument("--out", required=True, help="JSONL file; pass it as --metadata '{\"data_file\": FILE}'")
    p.add_argument("--source", default="bundled")
    p.add_argument("--faithful", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--categories", default=None, help="comma-separated subset of age,gender,race,ses,religion")
    p.add_argument("--limit-templates", type=int, default=None)
    p.add_argument("--variations", default=None, help="DBB-SG variations CSV")
    p.set_defaults(func=_export)


def _export(args: Any) -> int:
    docs = build_docs(args.variant, args.source, args.faithful, args.seed, args.categories, args.limit_templates,
                      variations=args.variations)
    print(write_jsonl(docs, args.out), f"({len(docs)} docs)")
    return 0
