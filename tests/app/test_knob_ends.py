"""Issue #60: every value a Playground knob offers runs.  For each knob, both ends of its range (its first and last
option, or lo and hi) on the default settings and on every story's settings: the knobs are reconciled as the page
reconciles them (the knob just moved wins), the log is simulated, and every method the setting trains takes a few
steps without an error — a degenerate setting is refused with a sentence before training (a ConfigError), never a
failed job."""
from dataclasses import replace

import numpy as np
import pytest

from ultr_core.app.knobs import KNOBS, knob_value, reconcile, trainable
from ultr_core.app.playground import PRESETS, PlaygroundSettings, story_settings
from ultr_core.errors import ConfigError

#: knobs whose ends only change how long a run takes or which seed it draws (checked as settings, not trained)
SIZE_ONLY = {"steps", "sessions", "seeds", "seed", "lr"}


def _ends(knob) -> list:
    if knob.field == "dataset":
        return []
    if knob.field == "methods":
        from ultr_core.app.playground import METHODS
        return [(), tuple(METHODS)]
    if knob.options is not None:
        return [knob.to_setting(knob.options[0]), knob.to_setting(knob.options[-1])]
    return [knob.cast(knob.lo), knob.cast(knob.hi)]


def _with(base: PlaygroundSettings, field: str, value) -> PlaygroundSettings:
    values = {k.field: knob_value(base, k) for k in KNOBS}
    fixed, _ = reconcile({**values, field: value}, field)
    return PlaygroundSettings(**{k: v for k, v in fixed.items() if k in PlaygroundSettings.__dataclass_fields__})


def _train_briefly(s: PlaygroundSettings) -> None:
    """Every job the setting submits, on a log of 2,000 sessions, each method for 3 steps."""
    small = replace(s, steps=PlaygroundSettings.__dataclass_fields__["steps"].default, sessions=5_000, seeds=1)
    small, left_out = trainable(small, small.log_spec().simulate()[2])       # as the page does before it submits
    assert left_out is None or "left out of this run" in left_out
    for key, fn, (spec, configs), kwargs in small.jobs():
        out = fn(spec, [replace(c, steps=3, eval_every=1) for c in configs], **kwargs)
        for name, run in out.items():
            assert np.isfinite(run["metrics"]["ndcg@3"]), (key, name)


CASES = [(base_name, k.field, v) for base_name in ["default"] + [p.name for p in PRESETS]
         for k in KNOBS for v in _ends(k)]


@pytest.mark.parametrize("base_name, field, value", [c for c in CASES if c[0] == "default" or c[1] not in SIZE_ONLY],
                         ids=lambda x: str(x)[:24])
def test_every_knob_end_runs_on_the_default_and_every_story(base_name, field, value):
    base = PlaygroundSettings() if base_name == "default" else story_settings(
        next(p for p in PRESETS if p.name == base_name))
    try:
        s = _with(base, field, value)
    except ConfigError as e:                     # refused before training, with a sentence naming the knob
        assert str(e) and "Traceback" not in str(e)
        return
    if field in SIZE_ONLY:
        s.log_spec()                            # a valid setting; its size is the knob's only effect
        return
    _train_briefly(s)


def test_the_page_says_what_it_left_out_and_trains_the_rest():
    """The top-k story with exploration at its end (1.0): every candidate is shown, CLD is left out with a sentence
    before training, and the rest trains — no failed job (AppTest)."""
    from apphelp import no_crash, page
    at = page("playground.py", timeout=120)
    at.query_params.update({"preset": "top-k cut hides relevance", "shuffle": "1.0", "steps": "100", "seeds": "1"})
    at.run()
    said = " ".join(c.value for c in at.caption)
    assert "CLD models top-k selection, but this log shows every candidate" in said and no_crash(at)
    job = at.session_state["pg_job"]
    assert not any("algorithm='cld'" in str(j.key) for j in job.jobs) and len(job.jobs) == 3    # Naive, Oracle, DLA
    assert job.join(180) if hasattr(job, "join") else True
    at.run()
    assert no_crash(at) and not at.error and not any("Training failed" in e.value for e in at.error)
