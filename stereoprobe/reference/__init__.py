"""Reference reports: stereoprobe's own commands on the papers' published model outputs, every printed figure
next to ours (``stereoprobe reference``, ``make reference``), and the evaluation report of each task's
documentation generated from that run."""

from stereoprobe.reference.compare import compare_globalbias, verdict_counts
from stereoprobe.reference.docs import evaluation_reports, section_of, write_docs
from stereoprobe.reference.figures import PaperFigure, PaperFigures, paper_figures, read_paper_figures
from stereoprobe.reference.run import ReferenceOptions, ReferenceRun, obtain_upstream, run_reference

__all__ = ["PaperFigure", "PaperFigures", "ReferenceOptions", "ReferenceRun", "compare_globalbias",
           "evaluation_reports", "obtain_upstream", "paper_figures", "read_paper_figures", "run_reference",
           "section_of", "verdict_counts", "write_docs"]
