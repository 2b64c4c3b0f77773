"""Not the stereoprobe command line: the root folder of a clone of the repository (issue 42.7).

Run from the clone's parent folder, ``python -m stereoprobe`` finds this folder first under the name
``stereoprobe`` (a folder without ``__init__.py``: a namespace package, which shadows the installed package) and
runs this file, which says so in one line instead of Python's "'stereoprobe' is a package and cannot be directly
executed". Inside the clone, or from any other folder, it is never run (the command line is
``stereoprobe/stereoprobe/__main__.py``).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))  # as Python found it (a link is not followed)
print(f"stereoprobe: the folder {HERE} (a clone of the repository) shadows the installed package when Python runs "
      f"from {os.path.dirname(HERE)}: run from inside the clone or from another folder", file=sys.stderr)
sys.exit(2)
