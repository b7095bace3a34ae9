"""CLD_pair (CLD paper eq. 13, Algorithm 2): a neural ranker f_β and a linear selection model f_ω
trained on pairs of candidates.

Two readings of where the pairs come from and how they are weighted (``pair_orientation``):

* ``"official"`` (default) — as the official code (github hyz20/CLD, commit f1227bd) trains it:
  ``train_alg/ips_sel.py`` with ``models/loss_func.py: BPRLoss_sel3``, pairs prepared per session
  (``trans_data.py → get_pair_sel``).  In every session, each ordered pair (i, j) of shown
  candidates with v_i > v_j, v = click × 1/ρ_position, carries Δ = v_i − v_j; pairs with an
  unselected member carry Δ = 0 and enter in **both orders**, drawn once per fit ``pair_ratio``
  (1) per Δ > 0 pair; the unselected candidates are de-duplicated over the log (a Δ = 0 pair
  holds no click, so every session repeats it).  Loss per batch (:func:`official_pair_loss`):
  mean s_i s_j Δ·(−log σ(f_β(x_i) − f_β(x_j))) + mean ℓ(i) + mean ℓ(j), with
  ℓ(k) = −log σ(f_ω(x_k) + f_β(x_i) − f_β(x_j)) if s_k = 1, −log σ(−f_ω(x_k)) if s_k = 0;
  f_ω linear without bias (``rank_model_pro2``).
* ``"random"`` / ``"selected_first"`` — this project's earlier reading of eq. 13 as printed
  (:func:`query_pairs`, :meth:`CLDPair.printed_loss`): pairs per query, unweighted BPR, mixed
  pairs in one order (a fair coin, or the selected member first), log σ(1 − f_ω) for unselected.

Where the official code differs from the default here (stated, not reproduced): its Δ = 0 pool
also holds self-pairs and the reversed copies of Δ > 0 pairs (which push the ranker against the
click order); both are left out.  Pairs of two unselected candidates (ω-only terms) are left out.
"""
from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ultr_core.algorithms.batches import PairBatch
from ultr_core.algorithms.models import ranker
from ultr_core.errors import ConfigError

__all__ = ["CLDPair", "official_pair_loss", "session_pairs", "query_pairs"]


def official_pair_loss(fi, fj, wi, *, wj, si, sj, delta):
    """The official CLD_pair loss (hyz20/CLD ``BPRLoss_sel3`` with C = 1) on a batch of pairs.

    >>> import torch
    >>> t = lambda *v: torch.tensor(v)
    >>> l = official_pair_loss(t(1.0, 0.0), t(0.0, 0.0), t(0.5, 0.0), wj=t(-0.5, 2.0), si=t(True, True),
    ...                        sj=t(True, False), delta=t(2.0, 0.0))
    >>> round(float(l), 4)   # bpr (2·sp(−1) + 0)/2; ℓ(i) (sp(−1.5) + sp(0))/2; ℓ(j) (sp(−0.5) + sp(2))/2
    2.061
    """
    d = fi - fj
    bpr = torch.where(si & sj, delta * F.softplus(-d), torch.zeros_like(d))
    pos = torch.where(si, F.softplus(-(wi + d)), F.softplus(wi))
    neg = torch.where(sj, F.softplus(-(wj + d)), F.softplus(wj))
    return bpr.mean() + pos.mean() + neg.mean()


class CLDPair(nn.Module):
    """CLD_pair: f_β (the configured model; ELU 256-128-64 + dropout 0.5 in the paper) and linear f_ω.

    ``printed_loss`` (eq. 13 as printed, for ``pair_orientation`` "random" / "selected_first"): for a
    pair (i, j) of one query, both selected and ordered so that ĉ_i/ρ_i > ĉ_j/ρ_j: log σ(f_β(x_i) −
    f_β(x_j)) plus log σ(f_ω(x_k) + f_β(x_i) − f_β(x_j)) for k = i, j; one selected (i): log σ(f_ω(x_i) +
    f_β(x_i) − f_β(x_j)) + log σ(1 − f_ω(x_j)); neither: log σ(1 − f_ω(x_i)) + log σ(1 − f_ω(x_j)).  The
    unselected term is as printed, log σ(1 − f_ω(x)) (binary cross-entropy would be log σ(−f_ω(x)))."""

    def __init__(self, config, n_features: int):
        super().__init__()
        self.official = config.pair_orientation == "official"
        self.beta = ranker(config, n_features)
        self.omega = nn.Linear(n_features, 1, bias=not self.official)

    def score(self, X):
        return self.beta(X).squeeze(-1)

    def loss(self, b):
        Xi, Xj, si, sj = b.Xi, b.Xj, b.si, b.sj
        fi, fj = self.score(Xi), self.score(Xj)
        wi, wj = self.omega(Xi).squeeze(-1), self.omega(Xj).squeeze(-1)
        if self.official:
            objective = official_pair_loss(fi, fj, wi, wj=wj, si=si, sj=sj, delta=b.delta)
        else:
            objective = self.printed_loss(fi, fj, wi, wj=wj, si=si, sj=sj)
        return objective, {"loss": float(objective.detach())}

    @staticmethod
    def printed_loss(fi, fj, wi, *, wj, si, sj):
        d = fi - fj
        ll = torch.where(si & sj, F.logsigmoid(d), torch.zeros_like(d))
        ll = ll + torch.where(si, F.logsigmoid(wi + d), F.logsigmoid(1 - wi))
        ll = ll + torch.where(sj, F.logsigmoid(wj + d), F.logsigmoid(1 - wj))
        return -ll.mean()

    def observation(self):
        return None


def _mixed_pairs(query: np.ndarray, selected: np.ndarray):
    """Every (selected, unselected) pair of candidates of one query, as indices into the arrays."""
    sel, uns = np.flatnonzero(selected), np.flatnonzero(~selected)
    uns = uns[np.argsort(query[uns], kind="stable")]
    nq = int(query.max()) + 1
    start = np.searchsorted(query[uns], np.arange(nq))
    count = np.bincount(query[uns], minlength=nq)
    reps = count[query[sel]]
    i = np.repeat(sel, reps)
    within = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    j = uns[np.repeat(start[query[sel]], reps) + within]
    return i, j


def session_pairs(data, tab, rho: np.ndarray, *, rng: np.random.Generator, ratio: float = 1.0,
                  max_pairs: int = 2_000_000, both_clicked: bool = True):
    """The official pairs (module docstring): split rows (i, j), their selection (s_i, s_j) and Δ.
    With ``both_clicked=False`` the Δ > 0 pairs of two clicked documents are left out: they are
    ordered by 1/ρ alone (position), and the official loss's selection terms push them at full
    strength whatever their Δ (docs/findings.md: CLD_pair's collapse at η = 0.1).

    ``data`` is the log's :class:`~ultr_core.algorithms.data.SessionData`, ``tab`` its candidate
    table (query, selected, rows per distinct candidate), ``rho`` the propensity per position."""
    L = data.n_positions
    sess = data.with_clicks()
    shown = data.shown[sess, :L]
    w = 1.0 / np.maximum(np.asarray(rho[:L], np.float64), 1e-6)
    v = np.where(shown, data.clicks[sess, :L] * w[None, :], 0.0)
    delta = v[:, :, None] - v[:, None, :]
    ok = (delta > 0) & shown[:, :, None] & shown[:, None, :]
    if not both_clicked:
        ok &= (data.clicks[sess, :L] == 0)[:, None, :]
    s, a, b = np.nonzero(ok)
    d = delta[s, a, b]
    ri, rj = data.rows[sess[s], a], data.rows[sess[s], b]
    if len(d) == 0:
        raise ConfigError("log", "no session has two shown candidates with different clicks: CLD_pair needs pairs")
    if len(d) > max_pairs:
        keep = rng.choice(len(d), max_pairs, replace=False)
        ri, rj, d = ri[keep], rj[keep], d[keep]
    mi, mj = _mixed_pairs(tab.query, tab.selected)
    pool_i, pool_j = np.r_[mi, mj], np.r_[mj, mi]                  # both orders
    n0 = min(int(round(ratio * len(d))), len(pool_i))
    pick = rng.choice(len(pool_i), n0, replace=False)
    zi, zj = tab.rows[pool_i[pick]], tab.rows[pool_j[pick]]
    rows_i, rows_j = np.r_[ri, zi], np.r_[rj, zj]
    sel_i = np.r_[np.ones(len(d), bool), tab.selected[pool_i[pick]]]
    sel_j = np.r_[np.ones(len(d), bool), tab.selected[pool_j[pick]]]
    return rows_i, rows_j, sel_i, sel_j, np.r_[d, np.zeros(n0)].astype(np.float32)


def query_pairs(tab, rng, *, max_pairs: int = 2_000_000, orientation: str = "random"):
    """Candidate pairs within queries (the printed reading): selected pairs ordered by ĉ/ρ (larger
    first), and pairs with an unselected member — in random order (``"random"``: eq. 13 and
    Algorithm 2 give no order for them) or with the selected member first (``"selected_first"``,
    which pushes the ranker toward the logging policy).  Returns indices into ``tab``."""
    order = np.argsort(tab.query, kind="stable")
    q = tab.query[order]
    starts = np.flatnonzero(np.r_[True, q[1:] != q[:-1]])
    sizes = np.diff(np.r_[starts, len(q)])
    out_i, out_j = [], []
    for m in np.unique(sizes[sizes > 1]):                          # one block per list length
        blocks = order[starts[sizes == m][:, None] + np.arange(m)[None, :]]
        a, b = np.triu_indices(m, 1)
        out_i.append(blocks[:, a].ravel())
        out_j.append(blocks[:, b].ravel())
    if not out_i:
        raise ConfigError("log", "no query has two candidates: CLD_pair needs pairs")
    i, j = np.concatenate(out_i), np.concatenate(out_j)
    si, sj = tab.selected[i], tab.selected[j]
    both = si & sj
    ti, tj = tab.target[i], tab.target[j]
    keep = ~both | (ti != tj)
    i, j, si, sj = i[keep], j[keep], si[keep], sj[keep]
    ti, tj = tab.target[i], tab.target[j]
    mixed_swap = ~si & sj if orientation == "selected_first" else rng.random(len(i)) < 0.5
    swap = np.where(si & sj, ti < tj, mixed_swap)
    i, j = np.where(swap, j, i), np.where(swap, i, j)
    if len(i) > max_pairs:
        pick = rng.choice(len(i), max_pairs, replace=False)
        i, j = i[pick], j[pick]
    return i, j


def pair_batches(config, data, tab, *, rho, rng, X_all):
    """(learner, next_batch) for CLD_pair under ``config.pair_orientation``."""
    learner = CLDPair(config, X_all.shape[1])
    if config.pair_orientation == "official":
        ri, rj, si, sj, d = (torch.from_numpy(a) for a in session_pairs(data, tab, rho, rng=rng,
                                                                        ratio=config.pair_ratio,
                                                                               both_clicked=config.pair_both_clicked))
    else:
        i, j = query_pairs(tab, rng, orientation=config.pair_orientation)
        ri, rj = torch.from_numpy(tab.rows[i]), torch.from_numpy(tab.rows[j])
        si, sj = torch.from_numpy(tab.selected[i]), torch.from_numpy(tab.selected[j])
        d = torch.zeros(len(i))
    n = len(ri)

    def next_batch():
        idx = torch.from_numpy(rng.integers(0, n, size=min(config.batch_size * 4, n)))
        return PairBatch(X_all[ri[idx]], X_all[rj[idx]], si[idx], sj[idx], d[idx])
    return learner, next_batch
