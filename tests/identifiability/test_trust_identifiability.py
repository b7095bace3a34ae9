"""Issue #48, item 4 (first part): under trust bias P = b_k + s_k r_d is affine in relevance; the Fisher
information's null space is 2 per connected component (an affine map of relevance) plus one per factor that shows
fewer than two distinct relevance values — checked on random designs over seeds, against the statement and against
an explicit null vector."""
import numpy as np
import pytest

from ultr_core.identifiability.users import (
    click_probability,
    null_dimension,
    predicted_null_dimension,
    trust_information,
)


def _design(rng, kind: str, D: int = 40, K: int = 6):
    home = rng.integers(0, K, D)
    if kind == "fixed":                                   # a fixed ranking: each document at one factor
        return np.arange(D), home, D, K
    other = (home + 1 + rng.integers(0, K - 1, D)) % K
    if kind == "blocks":                                  # swaps only inside {0, 1, 2} and {3, 4, 5}
        other = np.where(home < 3, (home + 1) % 3, 3 + (home - 2) % 3)
    doc, fac = np.r_[np.arange(D), np.arange(D)], np.r_[home, other]
    if kind == "lonely":                                  # one more factor, shown with a single document
        return np.r_[doc, 0], np.r_[fac, K], D, K + 1
    key = np.unique(doc * (K + 1) + fac)
    return key // (K + 1), key % (K + 1), D, K


@pytest.mark.parametrize("kind, expected", [("swaps", 2), ("blocks", 4), ("lonely", 3), ("fixed", None)])
def test_the_null_space_is_an_affine_map_per_component(kind, expected):
    for seed in range(5):
        rng = np.random.default_rng(seed)
        doc, fac, D, K = _design(rng, kind)
        r, s, b = rng.uniform(0.1, 0.9, D), rng.uniform(0.2, 0.6, K), rng.uniform(0.01, 0.2, K)
        got = null_dimension(trust_information(doc, fac, np.full(len(doc), 50.0), r=r, s=s, b=b, n_docs=D, n_factors=K))
        assert got == predicted_null_dimension(doc, fac, r, n_docs=D, n_factors=K), (kind, seed)
        if expected is not None:
            assert got == expected, (kind, seed)


def test_the_two_null_directions_are_scale_and_shift():
    """r → a·r, s → s/a and r → r + t, b → b − t·s leave every click probability unchanged (to rounding), and
    their tangent vectors are null vectors of the information."""
    rng = np.random.default_rng(7)
    doc, fac, D, K = _design(rng, "swaps")
    r, s, b = rng.uniform(0.1, 0.9, D), rng.uniform(0.2, 0.6, K), rng.uniform(0.05, 0.2, K)
    p = click_probability(doc, fac, r, s=s, b=b)
    assert np.allclose(click_probability(doc, fac, 1.3 * r, s=s / 1.3, b=b), p)
    assert np.allclose(click_probability(doc, fac, r + 0.02, s=s, b=b - 0.02 * s), p)
    info = trust_information(doc, fac, np.full(len(doc), 50.0), r=r, s=s, b=b, n_docs=D, n_factors=K)
    scale = np.r_[r, -s, np.zeros(K)]
    shift = np.r_[np.ones(D), np.zeros(K), -s]
    for v in (scale, shift):
        assert np.linalg.norm(info @ v) < 1e-9 * np.linalg.norm(info) * np.linalg.norm(v)


def test_pbm_is_the_special_case_with_one_null_direction():
    """Without the noise term (b ≡ 0, not a parameter) only the scale remains: one direction per component."""
    rng = np.random.default_rng(3)
    doc, fac, D, K = _design(rng, "swaps")
    r, s = rng.uniform(0.1, 0.9, D), rng.uniform(0.2, 0.6, K)
    info = trust_information(doc, fac, np.full(len(doc), 50.0), r=r, s=s, b=np.zeros(K), n_docs=D,
                             n_factors=K)[: D + K, : D + K]
    assert null_dimension(info) == 1
