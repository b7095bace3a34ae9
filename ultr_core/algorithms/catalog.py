"""What each algorithm is: citation, the equation it implements (LaTeX) and its
hyper-parameters — shown next to the controls in the app."""
from __future__ import annotations

__all__ = ["CATALOG", "formula_lines"]


from ultr_core.algorithms.specs import ALGORITHM_SPECS, formula_lines

#: key → citation, equation and hyper-parameters (a view of the one table, ultr_core.algorithms.specs)
CATALOG = {s.key: dict(cite=s.cite, latex=s.latex, params=s.params) for s in ALGORITHM_SPECS}
