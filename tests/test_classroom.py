"""A steady classroom (issue #49): what a teacher and a class see — plain notes, no stray characters, one name per
estimator, results that can be shown without a guess."""
from apphelp import no_crash, page


def test_train_log_box_shows_a_link_spec_without_stray_backslashes():
    """The spec is inline code: Markdown escapes showed there ("yahoo\\_sample/…", issue #49)."""
    at = page("train.py")
    at.query_params["log"] = "synthetic:100/sessions=2000/seed=1/data_seed=2"
    at.run()
    text = " ".join(i.value for i in at.info)
    assert no_crash(at) and "`synthetic:100/sessions=2000/seed=1/data_seed=2`" in text and "\\_" not in text, text


def _playground(**query):
    at = page("playground.py", timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert no_crash(at) and not at.error
    at.session_state["pg_job"].stop()
    return at


def test_the_ig_box_says_why_in_presentation_mode_and_what_it_means_under_cascade_users():
    """On a projector the box gave "IG: 3 components — not identifiable" with no reason; under DBN users it said
    "recoverable up to one scale", a statement about PBM users (issue #49)."""
    at = _playground(present="1", blocks="3", shuffle="0.5")
    assert any("3 components** — not identifiable: no document links the components" in w.value for w in at.warning)
    at = _playground(present="1", shuffle="0")
    assert any("not identifiable: fixed ranking — raise exploration" in w.value for w in at.warning)
    at = _playground(users="dbn")
    box = " ".join(s.value for s in at.success) + " ".join(c.value for c in at.caption)
    assert "identifiable for PBM users" in box and "DBN users examine by the clicks above" in box
    at = _playground()                                                          # PBM users: no such note
    assert not any("examine by the clicks above" in c.value for c in at.caption)
