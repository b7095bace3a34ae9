"""Click simulation (SPEC §2), vectorised numpy, seeded.

Conventions (both papers' η are kept apart):

* **position-bias severity η** — the exponent of the position-based examination.
  ``convention="eye_tracking"`` (ULTRA / LBD / identifiability papers):
  ``o_p = v_p^η`` with the eye-tracking base ``v`` (:data:`EYE_TRACKING`, positions past 10
  reuse 0.06).  ``convention="reciprocal"`` (CLD, eq. 14): ``o_p = (1/p)^η``.
* **coupling level η_c** (LBD §6.1) — individual-level observation
  ``o_p(x) = v_p^{η·max(wᵀx′ + 1, 0)}``, ``x′`` the 10 crux features (top-10 ExtraTrees
  importances).  With η = 1 this is exactly the paper's formula.  As in the official code
  (``libsvm_tools/normalize_feature.py``, ``ultra/utils/click_models.py``) the crux features are
  min–max scaled to **[−1, 1]** with the minimum and maximum over train + valid + test, the
  ExtraTrees are fitted on the whole labelled dataset (paper §6.1), and one direction
  ``u ~ U[−1, 1]^10`` (rescaled so its extremes are exactly ±1, as the official
  ``config/click_yahoo_0.1.json`` weights are ±η at their extremes) is drawn once per sweep
  (``coupling_seed``) and scaled: ``w = η_c·u``.  ``coupling_seed=None`` draws ``u`` per
  simulation seed; ``crux_scaling="train01"`` is the former [0, 1]-on-train scaling, under
  which η_c is about half the paper's η.  η_c is comparable with the paper's η only under the
  official scaling.
* **contexts** (identifiability paper, App. C.2) — every (query, position) gets a context id
  out of ``n_contexts``, fixed for the simulation; context vectors ``z ~ N(0, 0.35²)^10``,
  ``w ~ U[−1, 1]^10``; ``o(ctx, p) = v_p^{η·max(wᵀz + 1, 0)}``.  When coupling and contexts are
  both on, the two linear terms add inside one ``max(· + 1, 0)``.
* **relevance** ``r(y) = ε + (1 − ε)(2^y − 1)/(2^{y_max} − 1)`` with click noise ε and the
  dataset's maximum label ``y_max`` (``relevance="graded"``), or **binarised** as CLD §6 does
  (``relevance="binary"``): ``r = 1`` for grades ``y ≥ ⌈¾·y_max⌉`` (3–4 of 0–4; 2 of 0–2) and
  ``r = ε`` below — a click needs examination and relevance, irrelevant documents are clicked
  with the noise probability; ``relevance="binary_official"`` binarises as the official CLD code
  does (github hyz20/CLD): ``y ≥ 2`` on 0–4 grades, ``y ≥ 1`` otherwise.  MAP is then measured on
  the same binarisation.
* **top-k** — of the candidates the logging ranker orders only the first k are shown;
  the rest stay in the log with ``shown = False``, ``click = 0`` and ``true_observation = 0``.
* **logging ranker** — a linear pairwise (Ranking-SVM style) ranker fitted on 1 % of the
  labelled training queries (at least one query with two different labels), or the
  order given in the data (``logging="given"``, e.g. ULTRA init lists, the fully synthetic data).

Modules: :mod:`.clickmodel` (the configuration, r(y), o_p), :mod:`.policy` (logging ranker, crux
features, coupling direction), :mod:`.simulator` (:class:`ClickSimulator`), :mod:`.simulated`
(:func:`simulate_log` from a dataset spec), :mod:`.logspec` (:class:`LogSpec`, a log as a
shareable string) and :mod:`.synthetic_logs` (click tables drawn without sessions).

>>> from ultr_core.simulation import ClickModelConfig, simulate_log
>>> dataset, simulator, log = simulate_log("synthetic:60:8", ClickModelConfig(eta=1.0), n_sessions=200, seed=0)
>>> int(log.frame["session_id"].nunique())
200
"""
from ultr_core._lazy import lazy

_M = "ultr_core.simulation."
# imported on first use (ultr_core._lazy): 'train --help' and 'simulate --help' read the parameter table only
__getattr__, __dir__ = lazy(__name__, {
    **{n: _M + "clickmodel" for n in ("EYE_TRACKING", "ClickModelConfig", "binary_rule", "binary_threshold",
                                      "position_observation", "relevance_probability")},
    "LogSpec": _M + "logspec",
    "simulate_log": _M + "simulated",
    "ClickSimulator": _M + "simulator",
    "hidden_relevant": _M + "simulator",
    "binomial_ctr_table": _M + "synthetic_logs",
    "make_contextual_log": _M + "synthetic_logs",
})

__all__ = ["ClickModelConfig", "ClickSimulator", "EYE_TRACKING", "relevance_probability", "position_observation",
           "binary_threshold", "binary_rule", "hidden_relevant", "simulate_log", "LogSpec", "binomial_ctr_table",
           "make_contextual_log"]
