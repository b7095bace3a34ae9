"""The one table of algorithms (ultr_core.algorithms.specs): every record complete, every learner found, one
colour per method, and every other list of methods a view of it."""
import re

import pytest

from ultr_core.algorithms.specs import ALGORITHM_SPECS, FAMILIES, LOSSES


@pytest.mark.parametrize("spec", ALGORITHM_SPECS, ids=lambda s: s.key)
def test_every_algorithm_record_is_complete(spec):
    from ultr_core.algorithms.config import TrainConfig
    from ultr_core.algorithms.registry import resolve
    assert re.fullmatch(r"[a-z_]+", spec.key) and spec.label and spec.cite and spec.latex
    assert spec.family in FAMILIES and spec.loss in LOSSES
    assert callable(resolve(spec.learner))
    fields = set(TrainConfig.__dataclass_fields__)
    assert set(spec.params) <= fields, set(spec.params) - fields
    learner = resolve(spec.learner)
    from ultr_core.algorithms.learners import Learner
    draws_a_curve = isinstance(learner, type) and learner.observation is not Learner.observation
    assert bool(spec.curve) == draws_a_curve, "a learner with an observation curve says what it is, no other does"


def test_every_method_has_its_own_colour():
    colours = [s.colour for s in ALGORITHM_SPECS]
    assert len(set(colours)) == len(colours)
    from ultr_core.app.figures import METHOD_COLORS, method_color
    assert all(method_color(s.label) == s.colour != "#444444" for s in ALGORITHM_SPECS)
    assert all(METHOD_COLORS[s.label] == s.colour for s in ALGORITHM_SPECS)


def test_the_other_method_lists_are_views_of_the_table(capsys):
    from ultr_core.__main__ import main
    from ultr_core.algorithms.config import ALGORITHMS
    from ultr_core.algorithms.hyper import HYPERS
    from ultr_core.algorithms.registry import LEARNERS
    from ultr_core.studies.experiment import SELECTION_METHODS
    keys = [s.key for s in ALGORITHM_SPECS]
    assert list(ALGORITHMS) == keys
    fields = {f for s in ALGORITHM_SPECS for f in s.params}
    assert {h.field for h in HYPERS} <= fields                # every widget belongs to a method's params
    assert set(LEARNERS) | set(SELECTION_METHODS) == set(keys) and not set(LEARNERS) & set(SELECTION_METHODS)
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    out = capsys.readouterr().out
    assert all(k in out for k in keys)
