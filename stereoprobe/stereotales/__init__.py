"""StereoTales (Le Jeune et al. 2026, arXiv 2605.10442), one sub-package per stage, in the order a story flows:

- :mod:`.taxonomy`: dimensions, values, scenarios and prompts; the task's samples;
- :mod:`.extraction`: reading the refusal detector's and extractors' answers, consensus (the inspect task,
  solver and scorer that call the models are ``stereoprobe.tasks|solvers|scorers.stereotales``);
- :mod:`.mining`: stories from logs or the public release, the two-step association statistics, tables and
  the HTML report (Python API: :mod:`.mining.api`);
- :mod:`.judge`: the harm judge and the human alignment of the associations;
- :mod:`.contract`: the names these stages share (scorer name, score keys, table columns).
"""
