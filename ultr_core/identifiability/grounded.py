"""The factors' grounded Fisher information (issue #46): block diagonal, one block per component of the information
graph, each without its grounding factor — solved as a whole for Newton steps and inverted block by block for
standard errors (:mod:`~ultr_core.identifiability.uncertainty`)."""
from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.sparse.linalg import splu

__all__ = ["Grounded", "SMALL_MAX", "DENSE_MAX"]

_BLOCK = 256
#: blocks (information components) of at most this many free factors are inverted together, one batch per size
SMALL_MAX = 64
#: larger blocks up to this many factors are inverted densely (Cholesky), still larger ones by a sparse LU
DENSE_MAX = 4_000


def _dense_inverse(A: np.ndarray) -> np.ndarray:
    """A symmetric positive (semi-)definite block's inverse: Cholesky, or — when rounding leaves it not positive
    definite (links of vanishing weight) — by eigenvalues floored at 1e-12 of the largest (a near-null direction
    gets a huge variance, never a negative one)."""
    from scipy.linalg import LinAlgError, cho_factor, cho_solve, eigh
    try:
        return cho_solve(cho_factor(A), np.eye(len(A)))
    except LinAlgError:
        lam, V = eigh(A)
        lam = np.maximum(lam, 1e-12 * max(float(lam.max()), 1e-300))
        return (V / lam) @ V.T


class Grounded:
    """The factors' information with each block's grounding factor removed: block diagonal (``keep``: the free
    factors, ordered by block; ``pos``: each factor's row in it or −1).  ``solve`` for the Newton steps (one sparse
    LU of the whole), ``inverse(i, j)`` for entries of the inverse (rows i and j of one block), block by block."""

    def __init__(self, S, block: np.ndarray, free: np.ndarray):
        keep = np.flatnonzero(free)
        self.keep = keep[np.argsort(block[keep], kind="stable")]
        self.pos = np.full(len(block), -1, np.int64)
        self.pos[self.keep] = np.arange(len(self.keep))
        self.G = S[self.keep][:, self.keep].tocsc()
        _, self.bid = np.unique(block[self.keep], return_inverse=True)
        self.bid = self.bid.reshape(-1)
        self.size = np.bincount(self.bid)
        self.start = np.r_[0, np.cumsum(self.size)[:-1]]
        self.loc = np.arange(len(self.keep)) - self.start[self.bid]
        self._lu, self._inv = None, {}

    def solve(self, b: np.ndarray) -> np.ndarray:
        if not len(self.keep):
            return np.zeros_like(b)
        if self._lu is None:
            ridge = 1e-13 * max(float(abs(self.G.diagonal()).max()), 1e-300)
            self._lu = splu((self.G + sparse.identity(self.G.shape[0]) * ridge).tocsc())
        return self._lu.solve(b)

    def _group(self, m: int):
        """Batched dense inverses of the blocks holding m free factors (m ≤ SMALL_MAX): (block ids, inverses)."""
        if m not in self._inv:
            ids = np.flatnonzero(self.size == m)
            rank = np.full(len(self.size), -1)
            rank[ids] = np.arange(len(ids))
            G = self.G.tocoo()
            sel = rank[self.bid[G.row]] >= 0
            A = np.zeros((len(ids), m, m))
            A[rank[self.bid[G.row[sel]]], self.loc[G.row[sel]], self.loc[G.col[sel]]] = G.data[sel]
            self._inv[m] = (rank, np.linalg.inv(A))
        return self._inv[m]

    def _big(self, b: int):
        """The inverse of one large block: dense (Cholesky) up to DENSE_MAX factors, else its sparse LU."""
        if ("big", b) not in self._inv:
            s = slice(self.start[b], self.start[b] + self.size[b])
            sub = self.G[s][:, s]
            if self.size[b] <= DENSE_MAX:
                self._inv[("big", b)] = _dense_inverse(sub.toarray())
            else:
                self._inv[("big", b)] = splu(sub.tocsc())
        return self._inv[("big", b)]

    def inverse(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        """(G⁻¹)[i, j] for row pairs of one block each (vectorised)."""
        i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
        out = np.zeros(len(i))
        m = self.size[self.bid[i]] if len(i) else np.zeros(0, int)
        for size in np.unique(m):
            sel = np.flatnonzero(m == size)
            if size <= SMALL_MAX:
                rank, inv = self._group(int(size))
                out[sel] = inv[rank[self.bid[i[sel]]], self.loc[i[sel]], self.loc[j[sel]]]
            else:
                for b in np.unique(self.bid[i[sel]]):
                    out[sel[self.bid[i[sel]] == b]] = self._big_entries(int(b), i[sel], j[sel])
        return out

    def _big_entries(self, b: int, i, j) -> np.ndarray:
        i, j = i[self.bid[i] == b], j[self.bid[i] == b]
        f = self._big(b)
        if isinstance(f, np.ndarray):
            return f[self.loc[i], self.loc[j]]
        cols, inv_j = np.unique(self.loc[j], return_inverse=True)
        out = np.empty(len(i))
        for lo in range(0, len(cols), _BLOCK):                   # unit right-hand sides, in blocks
            part = np.arange(lo, min(lo + _BLOCK, len(cols)))
            E = np.zeros((self.size[b], len(part)))
            E[cols[part], np.arange(len(part))] = 1.0
            X = f.solve(E)
            hit = (inv_j >= lo) & (inv_j < lo + len(part))
            out[hit] = X[self.loc[i[hit]], inv_j[hit] - lo]
        return out
