"""What ``stereoprobe plan`` reads from DBB's samples (the descriptor's ``PlanTask.texts`` and ``.items``):
the texts a logprob-mode or DBB-SG sample scores, and the questions a sample holds."""

from __future__ import annotations

from typing import Any

from stereoprobe.dbb import contract as C


def scored_texts(sample: Any) -> list[str] | None:
    """The texts a DBB sample scores: logprob mode grouped, every MCQ prompt in both option orders; DBB-SG, the
    prompt followed by each option sentence (grouped or per question); None for a sample that scores none."""
    md = sample.metadata or {}
    if isinstance(md.get(C.META_MCQ_QUESTIONS), list):
        from stereoprobe.dbb import scoring as SC

        tmpl = md[C.META_MCQ_TEMPLATE]  # the template the task's solver fills (its prompt option)
        return [SC.mcq_prompt(q["context"], first, second, tmpl) for q in md[C.META_MCQ_QUESTIONS]
                for first, second in ((q["option_a"], q["option_b"]), (q["option_b"], q["option_a"]))]
    if isinstance(md.get(C.META_SG_QUESTIONS), list):
        return [f"{q['prompt']} {o}" for q in md[C.META_SG_QUESTIONS] for pair in q.get("options", []) for o in pair]
    if C.META_SG_PROMPT in md and C.META_SG_OPTIONS in md:
        return [f"{md[C.META_SG_PROMPT]} {o}" for pair in md[C.META_SG_OPTIONS] for o in pair]
    return None


def questions(sample: Any) -> int:
    """DBB questions in a sample: a template's questions in a grouped sample, else one."""
    md = sample.metadata or {}
    for key in (C.META_SG_QUESTIONS, C.META_MCQ_QUESTIONS):
        if isinstance(md.get(key), list):
            return len(md[key])
    return 1
