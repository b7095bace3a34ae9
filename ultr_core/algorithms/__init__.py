"""Learning algorithms behind one API: ``fit(log, dataset, config, on_step=…, stop=…)``.

See :data:`ALGORITHMS` for the list; each learner's docstring cites its paper and equation.
The configuration (:mod:`.config`) imports without torch; ``fit``, ``evaluate`` and ``FitResult``
load the training module (and torch, ≈ 1 s) on first use, so that commands that never train —
``python -m ultr_core ig`` — do not pay for it.
"""
from ultr_core.algorithms.config import ALGORITHMS, PRESETS, TrainConfig

__all__ = ["ALGORITHMS", "PRESETS", "TrainConfig", "FitResult", "evaluate", "fit"]


def __getattr__(name):
    if name in ("FitResult", "evaluate", "fit"):
        from ultr_core.algorithms import training
        return getattr(training, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
