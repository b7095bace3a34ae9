"""Sessions as click models read them: one row per search session — its query, the (query, document) pair shown
at each rank and the click vector — compressed to distinct patterns with a count, so that every fit and every
evaluation is a handful of vectorised passes over patterns, never a Python loop over sessions.

>>> import pandas as pd
>>> f = pd.DataFrame({"session_id": [0, 0, 1, 1, 2, 2], "query_id": [0, 0, 0, 0, 1, 1],
...                   "doc_id": [5, 6, 5, 6, 5, 7], "position": [1, 2] * 3, "click": [1, 0, 1, 0, 0, 1]})
>>> s = SessionArrays.from_frame(f, "toy")
>>> s.n_sessions, s.depth, s.pairs.tolist()
(3, 2, [[0, 1], [0, 1], [2, 3]])
>>> t = s.compress()
>>> t.weight.tolist(), t.clicks.astype(int).tolist()
([2.0, 1.0], [[1, 0], [0, 1]])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ultr_core.clickmodels.cells import cell_sums
from ultr_core.errors import ConfigError, DataFormatError, MissingColumnError

if TYPE_CHECKING:                 # pandas is imported where a frame is read: the click-model table needs none
    import pandas as pd

__all__ = ["SessionArrays", "SessionTable", "MAX_DEPTH", "split_sessions", "pair_mean", "PYCLICK_PRIOR", "PROPENSITY",
           "check_propensity"]

#: ranks a click model describes (PyClick's RANK_MAX is 10; the out-of-core reader codes a session's ranks in one
#: 64-bit mask): longer result lists are refused, not cut
MAX_DEPTH = 50
#: PyClick's prior of every per-pair probability: one success in two trials
PYCLICK_PRIOR = (1.0, 2.0)
#: patterns per slice a fit or a score reads at a time (:meth:`SessionTable.chunks`): about 100 MB of autograd state
#: for 10 ranks in a gradient fit
CHUNK_ROWS = 100_000


@dataclass(frozen=True)
class SessionArrays:
    """Sessions in file order: ``query`` (S,), ``pairs`` (S, D) codes of the (query, document) pairs shown at each
    rank, ``clicks`` (S, D) bool; ``pair_query`` maps a pair code to its query code and ``pair_keys`` to the
    file's (query, document) ids; ``shown`` (S, D) which ranks a session shows (None: all D — result lists of
    varying length are padded at the end, the padding cells pair 0 and unclicked); ``propensity`` (S, D) the
    logging policy's probability of showing the cell's document at its rank in a session of its query, when the log
    carries it (a ``propensity`` column, :data:`PROPENSITY`; NaN in the padding)."""

    query: np.ndarray
    pairs: np.ndarray
    clicks: np.ndarray
    pair_query: np.ndarray
    pair_keys: pd.DataFrame
    notes: tuple = ()          # what the reader repaired (ignored or repeated clicks)
    shown: np.ndarray | None = None
    propensity: np.ndarray | None = None

    @property
    def n_sessions(self) -> int:
        return len(self.query)

    @property
    def depth(self) -> int:
        return self.pairs.shape[1]

    @property
    def n_pairs(self) -> int:
        return len(self.pair_query)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "log") -> "SessionArrays":
        """From a click table (session_id, query_id, doc_id, position, click; ``shown`` rows only when present):
        every session must show ranks 1 … D, the same D for all (at most :data:`MAX_DEPTH`)."""
        import pandas as pd
        check_session_columns(frame.columns, name)
        if "shown" in frame:
            frame = frame[frame["shown"].astype(bool)]
        f = frame.sort_values(["session_id", "position"], kind="stable")
        key = ["query_id", "doc_id"]
        pair, keys = pd.factorize(pd.MultiIndex.from_frame(f[key]), sort=True)
        prop = pd.to_numeric(f[PROPENSITY], errors="coerce").to_numpy(float) if PROPENSITY in f else None
        return cls.from_rows(f["session_id"].to_numpy(), pair, f["position"].to_numpy(), click=f["click"].to_numpy(),
                             pair_keys=pd.DataFrame(list(keys), columns=key), name=name, propensity=prop)

    @classmethod
    def from_rows(cls, session, pair, position, *, click, pair_keys: pd.DataFrame, name: str,
                  propensity=None) -> "SessionArrays":
        """From rows ordered by (session id, rank): session ids, pair codes (rows of ``pair_keys``), ranks,
        0/1 clicks (and the logging policy's propensities, checked by :func:`check_propensity`); every session must
        show ranks 1 … n once each, n ≤ :data:`MAX_DEPTH` (lists of varying n are padded to the longest)."""
        import pandas as pd
        if len(pair) == 0:
            raise DataFormatError(name, "the log has no shown rows")
        session = np.asarray(session)
        codes = np.cumsum(np.r_[True, session[1:] != session[:-1]]) - 1   # session ids number sessions in file order
        sizes = _check_lists(codes, np.asarray(position), name)
        depth = int(sizes.max())
        pair_query = pd.factorize(pair_keys["query_id"], sort=True)[0]
        rank = np.asarray(position, np.int64) - 1
        pairs = np.zeros((len(sizes), depth), np.int64)
        clicks = np.zeros((len(sizes), depth), bool)
        pairs[codes, rank], clicks[codes, rank] = pair, np.asarray(click).astype(bool)
        shown = None if (sizes == depth).all() else np.arange(depth)[None, :] < sizes[:, None]
        prop = None
        if propensity is not None:
            prop = np.full((len(sizes), depth), np.nan)
            prop[codes, rank] = check_propensity(np.asarray(propensity, float), name)
        return cls(pair_query[pairs[:, 0]], pairs, clicks, pair_query, pair_keys, shown=shown, propensity=prop)

    @property
    def mask(self) -> np.ndarray:
        return np.ones(self.pairs.shape, bool) if self.shown is None else self.shown

    def subset(self, rows) -> "SessionArrays":
        return SessionArrays(self.query[rows], self.pairs[rows], self.clicks[rows], self.pair_query, self.pair_keys,
                             self.notes, None if self.shown is None else self.shown[rows],
                             None if self.propensity is None else self.propensity[rows])

    def compress(self) -> "SessionTable":
        """Distinct (pairs, clicks, shown ranks) patterns with their counts."""
        parts = [self.pairs, self.clicks.astype(self.pairs.dtype)] + ([] if self.shown is None else [
            self.shown.astype(self.pairs.dtype)])
        uniq, inverse = np.unique(np.concatenate(parts, axis=1), axis=0, return_inverse=True)
        weight = np.bincount(inverse.ravel(), minlength=len(uniq)).astype(np.float64)
        d = self.depth
        shown = None if self.shown is None else uniq[:, 2 * d:].astype(bool)
        return SessionTable(uniq[:, :d], uniq[:, d:2 * d].astype(bool), weight, self.n_pairs, self.n_sessions,
                            shown=shown)


@dataclass(frozen=True)
class SessionTable:
    """Distinct session patterns: ``pairs`` (P, D), ``clicks`` (P, D), ``weight`` (P,) sessions per pattern;
    ``n_pairs`` sizes the attractiveness arrays (every pair of the log, seen in training or not)."""

    pairs: np.ndarray
    clicks: np.ndarray
    weight: np.ndarray
    n_pairs: int
    n_sessions: int
    #: the attractiveness prior of every fit on it: (successes, trials), numbers or one per pair
    #: (:mod:`~ultr_core.clickmodels.prior`); PyClick's one success in two trials unless learned
    attr_prior: tuple = PYCLICK_PRIOR
    #: (P, D) the ranks each pattern shows (None: all; lists of varying length are padded at the end)
    shown: np.ndarray | None = None

    @property
    def depth(self) -> int:
        return self.pairs.shape[1]

    @property
    def mask(self) -> np.ndarray:
        """(P, D) bool: the cells a session shows — every count, fit and score runs over these alone."""
        return np.ones(self.pairs.shape, bool) if self.shown is None else self.shown

    @property
    def total_weight(self) -> float:
        return float(self.weight.sum())

    def chunks(self, rows: int | None = None):
        """The table in slices of at most ``rows`` patterns (default :data:`CHUNK_ROWS`) — what every fit and score
        iterates, so that a :class:`~ultr_core.clickmodels.patternfile.PatternFile` too large for memory is read the
        same way."""
        step = rows or CHUNK_ROWS
        if len(self.weight) <= step:
            yield self
            return
        for lo in range(0, len(self.weight), step):
            cut = slice(lo, lo + step)
            yield SessionTable(self.pairs[cut], self.clicks[cut], self.weight[cut], self.n_pairs, self.n_sessions,
                               self.attr_prior, None if self.shown is None else self.shown[cut])

    def per_pair(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per pair: (impressions, clicks, summed ranks) over the shown cells, session-weighted."""
        return per_pair(self)

    def reweighted(self, weight: np.ndarray) -> "SessionTable":
        """The patterns with other sessions each (``weight``, one per pattern: a part of them, as the learned prior's
        held-out fifth), those that weigh 0 left out — they add nothing to any sum."""
        from dataclasses import replace
        keep = weight > 0
        if keep.all():
            return replace(self, weight=weight)
        return replace(self, pairs=self.pairs[keep], clicks=self.clicks[keep], weight=weight[keep],
                       shown=None if self.shown is None else self.shown[keep])

    def cells(self, previous_click: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The shown (pair, rank) cells with impressions: (pair, rank, impressions, clicks), session-weighted — all a
        position-based model's likelihood reads; ``previous_click``: the rank index is rank·D + the rank of the last
        click above (D − 1 without one), the cells of the user browsing model."""
        return cell_sums(self, previous_click)


def per_pair(t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of a table of patterns (any with ``chunks``): (impressions, clicks, summed ranks) over the shown
    cells, session-weighted."""
    out = np.zeros((3, t.n_pairs))
    for c in t.chunks():
        w = (c.weight[:, None] * c.mask).ravel()
        ranks = np.broadcast_to(np.arange(1, c.depth + 1)[None, :], c.pairs.shape).ravel()
        flat = c.pairs.ravel()
        for i, v in enumerate((w, w * c.clicks.ravel(), w * ranks)):
            out[i] += np.bincount(flat, v, t.n_pairs)
    return out[0], out[1], out[2]


def pair_sums(t, mask, success) -> tuple[np.ndarray, np.ndarray]:
    """(Σ weight·success, Σ weight) per (query, document) pair over the (pattern, rank) cells of ``t`` in ``mask``."""
    w = np.broadcast_to(t.weight[:, None], t.pairs.shape) * mask * t.mask
    return (np.bincount(t.pairs.ravel(), (w * success).ravel(), t.n_pairs),
            np.bincount(t.pairs.ravel(), w.ravel(), t.n_pairs))


def rank_sums(t, mask, success) -> tuple[np.ndarray, np.ndarray]:
    """(Σ weight·success, Σ weight) per rank over the (pattern, rank) cells of ``t`` in ``mask``."""
    w = t.weight[:, None] * mask * t.mask
    return (w * success).sum(0), w.sum(0)


def prior_mean(sums, prior=PYCLICK_PRIOR) -> np.ndarray:
    """(prior successes + Σ successes) / (prior trials + Σ trials) of ``sums`` = (Σ successes, Σ trials)."""
    return (prior[0] + sums[0]) / (prior[1] + sums[1])


def pair_mean(t: SessionTable, mask, success, *, prior=None) -> np.ndarray:
    """(prior successes + Σ weight·success) / (prior trials + Σ weight) over the (pattern, rank) cells in ``mask``,
    per (query, document) pair; ``prior`` None: the table's attractiveness prior (PyClick's one in two unless
    learned, :mod:`~ultr_core.clickmodels.prior`)."""
    prior = t.attr_prior if prior is None else prior
    num, den = pair_sums(t, mask, success)
    return (prior[0] + num) / (prior[1] + den)


def chunk_sums(t, sums) -> list:
    """``sums(chunk)`` (a list of arrays, each a sum over the chunk's patterns) summed over the chunks of ``t`` — a
    fit by counting reads a table of any size this way."""
    total = None
    for c in t.chunks():
        part = sums(c)
        total = list(part) if total is None else [a + b for a, b in zip(total, part)]
    return total


#: the optional column of the logging policy's propensities: P(this document at this rank | the session's query), as
#: stochastic-logging practitioners and the Open Bandit data record them (OBP's ``pscore_item_position``)
PROPENSITY = "propensity"


def check_propensity(values: np.ndarray, name: str) -> np.ndarray:
    """The logged propensities, refused unless every shown row holds a probability in (0, 1] (a row shown with
    probability 0 cannot have been logged), naming the count and the first bad row."""
    bad = ~(np.isfinite(values) & (values > 0) & (values <= 1))
    if bad.any():
        raise DataFormatError(name, f"column '{PROPENSITY}' must hold the logging policy's probability of the row's "
                                    f"document at its rank, in (0, 1]: {int(bad.sum()):,} shown row(s) do not "
                                    f"(the first is shown row {int(np.argmax(bad)) + 1:,})")
    return values


def check_session_columns(have, name: str) -> None:
    """Click models need a session id per result list, besides query, document, rank and click."""
    missing = [c for c in ("session_id", "query_id", "doc_id", "position", "click") if c not in have]
    if missing:
        raise MissingColumnError(name, f"click models need column(s) {', '.join(missing)} (a session id per "
                                       "result list)", missing)


def _check_lists(codes: np.ndarray, position: np.ndarray, name: str) -> np.ndarray:
    """Each session's list length n (ranks 1 … n once each, n ≤ MAX_DEPTH); refuses gaps, repeats and longer
    lists."""
    sizes = np.bincount(codes)
    if sizes.max() > MAX_DEPTH:
        raise DataFormatError(name, f"result lists of {sizes.max()} exceed the {MAX_DEPTH} ranks a click model "
                                    "describes")
    start = np.r_[0, np.cumsum(sizes)[:-1]]
    expected = np.arange(len(position)) - np.repeat(start, sizes) + 1
    if not np.array_equal(position, expected):
        bad = int(codes[np.flatnonzero(position != expected)[0]])
        raise DataFormatError(name, f"session {bad + 1} (in file order) does not show ranks 1 to {sizes[bad]} once "
                                    "each: every session must show ranks 1 … n")
    return sizes


def split_sessions(s: SessionArrays, fraction: float) -> tuple[SessionArrays, SessionArrays, int]:
    """PyClick's ``examples/Example.py``: the first ``fraction`` of the sessions (file order) train, the rest
    test; test sessions whose query never occurs in training are dropped and counted."""
    if not 0 < fraction < 1:
        raise ConfigError("split", f"must be a number in (0, 1), got {fraction!r}")
    cut = int(s.n_sessions * fraction)
    if cut == 0 or cut == s.n_sessions:
        raise ConfigError("split", f"{fraction} of {s.n_sessions} sessions leaves no training or no test session")
    train, test = s.subset(slice(0, cut)), s.subset(slice(cut, None))
    seen = np.isin(test.query, np.unique(train.query))
    return train, test.subset(seen), int((~seen).sum())
