"""Not the stereoprobe package: the root folder of a clone of the repository (issue 42.3 and 42.7).

Run from the clone's parent folder, Python finds the clone first under the name ``stereoprobe`` (the current
folder comes first on ``sys.path``). Without this file the clone would be a namespace package that shadows the
installed one: ``from stereoprobe.logs import LogInfo`` then imported a pilot's ``logs/`` folder and failed with
"cannot import name 'LogInfo' from 'stereoprobe.logs' (unknown location)". Imported as ``stereoprobe``, this file
hands the import over to the stereoprobe that is installed in this Python (the editable install of this clone or
any other, or a wheel): Python's import system reads the module back from ``sys.modules`` after running this
file, so ``import stereoprobe`` and ``python -m stereoprobe`` get the installed package. Where none is installed,
the import fails with one line naming the folder. Imported under any other name (the clone's folder name), it
does nothing; inside the clone, or from any other folder, it is never imported.
"""

import os
import sys

if __name__ == "stereoprobe":
    from importlib.machinery import PathFinder
    from importlib.util import module_from_spec

    _clone = os.path.dirname(os.path.abspath(__file__))  # as Python found it (a link is not followed)

    def _usable(spec):  # type: ignore[no-untyped-def]
        """A regular package that is not this file (a finder searching ``sys.path`` finds this file again)."""
        return (spec is not None and spec.origin not in (None, "namespace")
                and os.path.abspath(spec.origin) != os.path.abspath(__file__))

    def _installed_spec():  # type: ignore[no-untyped-def]
        """The spec of the installed stereoprobe: a regular package on ``sys.path`` other than the clone's parent
        folder, else the one an import hook offers (setuptools' editable finder)."""
        parent = os.path.dirname(_clone)
        paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != parent]
        spec = PathFinder.find_spec("stereoprobe", paths)
        if _usable(spec):
            return spec
        for finder in sys.meta_path:
            if finder is PathFinder or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec("stereoprobe", None)
            if _usable(spec):
                return spec
        return None

    _spec = _installed_spec()
    if _spec is None:
        raise ImportError(f"stereoprobe: the folder {_clone} (a clone of the repository) shadows the package when "
                          f"Python runs from {os.path.dirname(_clone)}, and stereoprobe is not installed in this "
                          f"Python: run from inside the clone after `pip install -e .` (or `make install`)")
    _module = module_from_spec(_spec)
    sys.modules["stereoprobe"] = _module  # read back by the import system once this file has run
    _spec.loader.exec_module(_module)  # type: ignore[union-attr]
