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
