"""One truth per log (issue #49): a click on a URL shown at several positions of one result page is counted once,
at the position the format's convention gives — PyClick's ``YandexRelPredChallengeParser`` for the Yandex logs
(``results.index(url)``: the first) — with the count in the notes, the same on every path."""
from __future__ import annotations

from clihelp import write

from ultr_core.logs.ingestion import ingest
from ultr_core.logs.mapping import read_user_log

LOG = ("10\t0\tQ\t5\t1\tu1\tu2\tu2\tu2\tu2\tu2\tu2\tu2\n10\t3\tC\tu2\n"      # u2 at positions 2-8, clicked once
       "11\t0\tQ\t5\t1\tu2\tu1\tu3\tu4\tu5\tu6\tu7\tu8\n11\t2\tC\tu1\n11\t4\tC\tu9\n")


def _pyclick_relpred(text: str):
    """PyClick's YandexRelPredChallengeParser, written here with loops: (session, url, position, click)."""
    rows, session, results = [], None, []
    for line in text.splitlines():
        f = line.strip().split("\t")
        if len(f) >= 6 and f[2] == "Q":
            session, results = len(rows), f[5:]
            rows.append([[u, p + 1, 0] for p, u in enumerate(results)])
        elif len(f) == 4 and f[2] == "C" and f[3] in results:
            rows[session][results.index(f[3])][2] = 1
    return [(s, u, p, c) for s, page in enumerate(rows) for u, p, c in page]


def test_a_click_on_a_url_shown_at_several_positions_counts_once_at_the_first(tmp_path):
    f = write(tmp_path, "clicks.txt", LOG)
    log, notes = read_user_log(str(f), "yandex")
    got = [(int(s), u, int(p), int(c)) for s, u, p, c in
           log.frame[["session_id", "doc_key", "position", "click"]].itertuples(index=False)]
    assert got == _pyclick_relpred(LOG)
    assert log.frame["click"].sum() == 2                                   # was 8: the click at all seven positions
    assert any("1 click(s) on a URL shown at several positions" in n for n in notes)
    t = ingest(str(f), "yandex")                                          # the CLI's out-of-core counts
    assert t.n_clicks == 2 and any("several positions" in n for n in t.notes)
    text = write(tmp_path, "text.txt", LOG.replace("\t5\t1\tu2\tu1", "\tq.5\t1\tu2\tu1"))   # a text id: the SQL path
    log2, notes2 = read_user_log(str(text), "yandex")
    assert log2.frame["click"].sum() == 2 and any("several positions" in n for n in notes2)
