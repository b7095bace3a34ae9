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
    box = " ".join(s.value for s in at.success)
    assert "identifiable for PBM users only: DBN users examine by the clicks above" in box, box
    at = _playground()                                                          # PBM users: no such note
    assert "recoverable up to one scale" in " ".join(s.value for s in at.success)


def test_one_name_per_estimator_on_every_page(capsys, tmp_path):
    """"all_pairs" on one page, "intervention harvesting: all pairs (ML)" on the other (issue #49)."""
    from clihelp import cli
    from test_page_upload import CSV

    from ultr_core.identifiability.estimation import ESTIMATOR_LABELS
    up = page("upload.py").run()
    up.file_uploader(key="upload_click_log").set_value(("log.csv", CSV, "text/csv")).run()
    ig = page("identifiability.py", timeout=120).run()
    names = list(ESTIMATOR_LABELS.values())
    for at in (up, ig):
        box = [s for s in at.selectbox if s.label == "position-bias estimator"][0]
        assert no_crash(at) and box.options == names and box.value == "all_pairs"
    f = tmp_path / "log.csv"
    f.write_bytes(CSV.replace(b"qid,url,pos,clicked", b"query_id,doc_id,position,click"))
    rc, out, _ = cli(["ig", f, "--bootstrap", 5], capsys)
    assert rc == 0 and "intervention harvesting: all pairs (ML), 90 % bands (document bootstrap" in out


def test_a_compare_link_remembers_a_skipped_guess():
    at = page("compare.py")
    at.query_params["guess"] = "0"
    at.run()
    assert no_crash(at) and not at.toggle(key="cmp_guess_on").value
