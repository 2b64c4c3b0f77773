"""StereoTales profile extraction: reading the extractors' and refusal detector's answers (:mod:`.parsing`)
and combining their votes (:mod:`.consensus`). The inspect scorer that calls the models is
``stereoprobe.scorers.stereotales``."""
