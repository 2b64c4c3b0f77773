"""stereoprobe: find social stereotypes in large language models.

Three published probes (StereoTales, DBB, GlobalBias) as inspect-ai tasks, with the post-processing
statistics and reports in :mod:`stereoprobe.cli`.
"""

__version__ = "0.1.0"
