"""The cascade log-likelihood's written-out gradient (issue #62, item 3: one autograd node instead of a dozen per
rank) against torch's autograd of the same recursion, for the three transitions the fits use (DBN, CCM, DCM), with
ragged lists (``shown``) and pattern weights."""
import numpy as np
import pytest
import torch

from ultr_core.clickmodels.gradient import cascade_log_likelihood, cascade_log_likelihood_fast


def _transition(kind, a, s, g):
    if kind == "dbn":
        return g[0] * (1 - s), g[0]
    if kind == "ccm":
        return g[1] * (1 - a) + g[2] * a, g[0]
    return g + 0.0 * a, 1.0                                      # DCM: λ per rank after a click, always on without


@pytest.mark.parametrize("kind", ["dbn", "ccm", "dcm"])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_written_out_gradient_is_autograds(kind, seed):
    rng = np.random.default_rng(seed)
    n, depth = 500, 10
    clicks = torch.from_numpy(rng.random((n, depth)) < 0.3)
    shown = torch.from_numpy(np.arange(depth)[None, :] < rng.integers(2, depth + 1, n)[:, None])
    weight = torch.from_numpy(rng.uniform(0.5, 3.0, n))
    logits = [torch.tensor(rng.normal(0, 2, shape), requires_grad=True)
              for shape in ((n, depth), (n, depth), (depth,) if kind == "dcm" else (3,))]
    values, grads = [], []
    for f in (cascade_log_likelihood, cascade_log_likelihood_fast):
        a, s, g = (torch.sigmoid(x) for x in logits)
        after_click, go_on = _transition(kind, a, s, g)
        value = (weight * f(a, after_click, go_on, clicks, shown=shown)).sum()
        values.append(float(value.detach()))
        grads.append([torch.zeros_like(x) if d is None else d
                      for x, d in zip(logits, torch.autograd.grad(value, logits, allow_unused=True))])
    assert values[1] == pytest.approx(values[0], rel=1e-13)
    for mine, reference in zip(grads[1], grads[0]):
        assert torch.allclose(mine, reference, rtol=1e-9, atol=1e-12)
    assert grads[1][0].abs().sum() > 0                             # not a gradient that cannot fail
