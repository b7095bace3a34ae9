"""Where a candidate ranking comes from (CLI ``--ranking``; one record each), what a direct method may refit and how
many bootstrap resamples a value gets: the choices the ``evaluate`` command and the pages offer, importable without
the estimators' machinery (``evaluate --help`` reads only this table)."""
from __future__ import annotations

from dataclasses import dataclass

from ultr_core.clickmodels.registry import DEFAULT_USER_MODEL, MODEL_BY_KEY

__all__ = ["CandidateSource", "SOURCES", "DIRECT_MODELS", "N_BOOT"]

#: bootstrap resamples of the sessions behind every interval of a ranking's value
N_BOOT = 100


@dataclass(frozen=True)
class CandidateSource:
    """One way to name a candidate: ``key`` (CLI ``--ranking`` value or ``FILE``), ``label``, ``help``."""

    key: str
    label: str
    help: str


SOURCES = (
    CandidateSource("production", "the production order", "each document at its expected logged rank (a session "
                    "not showing it counts as below the list): the log's own order, valued at what was logged when "
                    "the logging policy is deterministic"),
    CandidateSource("scores", "a scores file", "CSV/TSV with query_id, doc_id, score: higher scores rank first"),
    CandidateSource("model", "a click model's relevance", "re-rank each query by a fitted click model's relevance "
                    "(``model:pbm``)"),
)

#: click models the direct method may use: user models (they value a re-ranking by document and position; the CTR
#: models cannot) that refit fast in every resample (counting or EM, not gradient); the simulations' default first
DIRECT_MODELS = tuple(sorted((s.key for s in MODEL_BY_KEY.values() if s.cls.USER_MODEL and s.inference != "gradient"),
                            key=lambda k: k != DEFAULT_USER_MODEL))
