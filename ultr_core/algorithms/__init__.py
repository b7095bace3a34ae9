"""Learning algorithms behind one API: ``fit(log, dataset, config, on_step=…, stop=…)``.

See :data:`ALGORITHMS` for the list; each learner's docstring cites its paper and equation.
"""
from .config import ALGORITHMS, PRESETS, TrainConfig
from .training import FitResult, evaluate, fit

__all__ = ["ALGORITHMS", "PRESETS", "TrainConfig", "FitResult", "evaluate", "fit"]
