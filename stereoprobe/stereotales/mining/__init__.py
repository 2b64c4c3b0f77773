"""StereoTales association mining, from stories to tables and report.

In the order the data flows: :mod:`.stories` (+ :mod:`.stories_logs`, :mod:`.stories_release`) read eval
logs or the public release into the stories frame; :mod:`.associations` runs the paper's two-step
statistics (:mod:`.config` its constants, :mod:`.pvalues` the step-1 p-values, :mod:`.aggregate` the
cross-model and cross-language views); :mod:`.tables` shapes the published tables; :mod:`.report` writes the
HTML report; :mod:`.api` ties them together for the ``stereoprobe associations`` command;
:mod:`.synthetic` makes stories with known truth for tests and benchmarks.
"""
