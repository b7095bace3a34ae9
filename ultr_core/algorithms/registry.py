"""Algorithm key → learner class, for the training loop and the tests: a view of the one table of algorithms
(:mod:`ultr_core.algorithms.specs`); the selection models (CLD, CLD_pair, Heckman, RankAgg) are fitted in closed
form by :func:`ultr_core.algorithms.topk_selection.fit_selection` and have no learner class.
"""
from __future__ import annotations

import importlib

from ultr_core.algorithms.specs import ALGORITHM_SPECS

__all__ = ["LEARNERS", "resolve"]


def resolve(learner: str):
    """The object a spec's ``"module:name"`` names (a module under ``ultr_core.algorithms``, or a dotted module
    path for an extension's learner)."""
    module, name = learner.split(":")
    return getattr(importlib.import_module(module if "." in module else f"ultr_core.algorithms.{module}"), name)


LEARNERS = {s.key: resolve(s.learner) for s in ALGORITHM_SPECS if s.family != "selection"}
