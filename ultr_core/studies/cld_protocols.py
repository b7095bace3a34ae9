"""The two protocols of the CLD experiments: the **official** code's (default) and the paper's text.

A protocol is the click model's binarisation and convention plus, per method, the training
configuration (loss form, propensities, rankers, optimiser).  The CLD study
(``experiments/cld_study.py --protocol``) and the Compare page's CLD presets read them from here.

* ``official`` — as github hyz20/CLD (commit f1227bd) runs its experiments: relevance binarised at
  grade ≥ 2 on 0–4 grades (≥ 1 otherwise), examination (1/(rank+1))^η = (1/p)^η inside the top k;
  propensities **estimated** by result randomisation (10⁶ shuffled sessions); Naive and IPS
  **pairwise** (BPR on c·w-ordered pairs weighted by Δ, weights not clipped); Heckman_rank and
  RankAgg as its ``heckman.py`` / ``rankagg.py`` (logistic / 1.6, intercepts dropped); CLD on
  per-(session, candidate) rows with the logistic link and ρ = 0.5; CLD_pair on its per-session
  Δ-weighted pairs; rankers ELU 256-128-64 with dropout 0.5 (linear CLD and Heckman_rank), Adam
  lr 10⁻³ with weight decay 10⁻² on every parameter, Xavier-normal initialisation.
* ``paper_text`` — this project's earlier reading of the paper's §6 (every study committed before
  issue #21): grades ≥ ¾·max relevant, listwise Naive / IPS with the click model's propensities
  (weights clipped at 10), Heckman_rank as Ovaisi et al., eq. 10 as printed (per-candidate ĉ/ρ,
  probit, γ tuned in [0.05, 0.30]), CLD_pair with mixed pairs in random order, Xavier-uniform, L2
  10⁻³, lr 10⁻³ (DNN) / 5·10⁻³ (linear).

Both keep **model selection on validation** (the best validation nDCG@10 of the run); the official
code has no validation and reports its last epoch on test — ``keep_best=False`` ("last step") shows
what that selection does.  Training length is this project's (600 steps of 256 sessions / 1,024
rows / 1,024 pairs), not the official 40 epochs (about 150,000 steps of 128 rows on the synthetic
Table 2 data: out of reach on two CPU cores).
"""
from __future__ import annotations

from ultr_core.algorithms.specs import PAPER_DNN, PAPER_LINEAR  # noqa: F401  (re-exported: the paper-text settings)

__all__ = ["CLD_PROTOCOLS", "protocol_click", "protocol_train", "RHO_GRID", "PAPER_DNN", "PAPER_LINEAR"]

#: the official ρ (0.5) inside the paper's range for γ, for tuning on validation
RHO_GRID = [0.1, 0.3, 0.5, 0.7]

#: protocol → ClickModelConfig changes; each method's TrainConfig changes under a protocol are its record's
#: ``protocols`` in the algorithm table (:data:`~ultr_core.algorithms.specs.ALGORITHM_SPECS`)
CLD_PROTOCOLS = {
    "official": {"click": {"convention": "reciprocal", "relevance": "binary_official"}},
    "paper_text": {"click": {"convention": "reciprocal", "relevance": "binary"}},
}


def protocol_click(protocol: str) -> dict:
    """ClickModelConfig changes of a protocol.

    >>> protocol_click("official")
    {'convention': 'reciprocal', 'relevance': 'binary_official'}
    """
    return dict(CLD_PROTOCOLS[protocol]["click"])


def protocol_train(protocol: str, algorithm: str) -> dict:
    """TrainConfig changes of a protocol for one method (``algorithm`` included).

    >>> c = protocol_train("official", "ips")
    >>> c["algorithm"], c["ips_form"], c["propensity"], c["max_weight"], c["weight_decay"]
    ('ips', 'pairwise', 'estimated', None, 0.01)
    """
    from ultr_core.algorithms.specs import SPECS_BY_KEY
    return {"algorithm": algorithm, **SPECS_BY_KEY[algorithm].protocols[protocol]}
