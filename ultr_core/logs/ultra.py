"""ULTRA folders as click logs: the ``train`` split's ``init_list`` as displayed lists (a document is
its feature vector, shown by any query) with, when present, ``train/train.clicks``.
"""
from __future__ import annotations

from pathlib import Path

from ultr_core.data.loaders import MAX_LABEL  # one label rule for every reader (LETOR's 0–31)
from ultr_core.errors import DataFormatError, DiskFullError
from ultr_core.logs.bounds import count_tokens

#: displayed documents an ULTRA folder may hold (WEB10K's train split has 0.72 M): counted before DuckDB
#: splits a line, so an upload stays within its 1.5 GB budget (docs/safety.md)
MAX_ULTRA_ROWS = 3_000_000
#: DuckDB's memory while reading an ULTRA folder (larger work spills to a temporary folder)
ULTRA_MEMORY = "1GB"

__all__ = ["ultra_frame", "MAX_ULTRA_ROWS"]


def ultra_frame(root: Path, name, *, labels: bool = False, max_rows: int = MAX_ULTRA_ROWS):
    """The displayed lists of an ULTRA directory's ``train`` split as rows (``session_id``,
    ``query_id``, ``doc_id``, ``position``, ``click``): ``train.init_list`` (``qid d1 d2 …``,
    −1 = padding; one session per line) and, when present, ``train.clicks`` (``qid c1 c2 …``,
    aligned by line).  Only ``train/`` is read (the identifiability paper's folders have no other).

    **Documents.**  A line of ``init_list`` points at rows of ``train.feature``; as in the official
    identifiability check (Keytoyze/ULTR-identifiability, ``identifiability_check.py``, which keys
    by the feature tuple), the **feature vector** is the document: ``doc_id`` is one id per distinct
    vector (rows with identical features are one document, explicit zeros ignored), whatever query
    shows it.  Without a feature file, ``doc_id`` is the row index.  With ``labels``, the graded
    label of each row from ``train.labels`` (aligned by line and rank) is a ``label`` column.
    Memory is bounded: DuckDB works within :data:`ULTRA_MEMORY` (spilling to a temporary folder) and
    the displayed documents are counted before the frame is built (at most ``max_rows``).
    Returns ``(frame, notes)``."""
    import tempfile

    import duckdb

    from ultr_core.logs.sql import disk_full, reporting_budget
    with tempfile.TemporaryDirectory(prefix="ultr_ultra_sql_") as tmp, reporting_budget():
        try:
            return _ultra_frame(root, name, labels, max_rows, tmp)
        except DiskFullError:
            raise
        except (duckdb.Error, MemoryError) as e:      # the memory limit, or DuckDB refusing the input
            if disk_full(e):
                raise DiskFullError() from None
            first = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
            raise DataFormatError(f"{name}/train/", f"cannot read the ULTRA folder within {ULTRA_MEMORY} of memory "
                                                    f"({first})") from None


def _ultra_frame(root: Path, name, labels: bool, max_rows: int, tmp: str):
    """Read → check → join, in DuckDB under :data:`ULTRA_MEMORY`: init_list, clicks, displayed documents, the
    document key (a distinct feature vector) and, with ``labels``, the labels; every bad line is named."""
    from ultr_core.logs.sql import connect
    train = root / "train"
    init, clk, feat = train / "train.init_list", train / "train.clicks", train / "train.feature"
    label = f"{name}/train/"
    if not init.is_file():
        raise DataFormatError(label + "train.init_list", "file not found (an ULTRA folder needs train/train.init_list)")
    tokens, lines, pads = count_tokens(init)        # at least this many displayed documents: refuse before SQL
    if tokens - lines - pads > max_rows:
        raise DataFormatError(label + init.name, f"at least {tokens - lines - pads:,} displayed documents exceed the "
                                                 f"limit of {max_rows:,} for an ULTRA folder")
    con = connect(ULTRA_MEMORY, tmp)
    notes = []
    try:
        _load_init_clicks(con, init, clk, label)
        _load_displayed(con, init, clk, label, max_rows)
        key_join, key = _document_key(con, feat, init, label, notes)
        lab_sql, lab_join = _label_join(con, train / "train.labels", label) if labels else ("", "")
        df = con.sql(f"""SELECT d.ln - 1 AS session_id, d.query_id, {key} AS doc_id, d.position::INTEGER AS position,
                               coalesce(try_cast(cl.c[d.position + 1] AS INTEGER), -1) AS click {lab_sql}
                        FROM docs d LEFT JOIN cl USING (ln) {key_join} {lab_join} ORDER BY d.ln, d.position""").df()
    finally:
        con.close()
    if clk.exists() and len(df) and ((df["click"] != 0) & (df["click"] != 1)).any():
        row = df.index[(df["click"] != 0) & (df["click"] != 1)][0]
        raise DataFormatError(label + clk.name, "clicks must be 0 or 1", int(df["session_id"].iloc[row]) + 1)
    df["click"] = df["click"].clip(lower=0)
    if not clk.exists():
        notes.append("no train/train.clicks: all clicks are 0 (the graph does not need clicks)")
    return df, notes


def _load_init_clicks(con, init: Path, clk: Path, label: str) -> None:
    """Tables ``il`` (each init_list line's tokens) and ``cl`` (each clicks line's tokens; empty without a file)."""
    from ultr_core.logs.sql import _register_lines, run_sql
    _register_lines(con, init, label + init.name)
    run_sql(con, "CREATE TEMP TABLE il AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), ' ') "
              "AS t FROM raw WHERE line IS NOT NULL AND trim(line) <> ''", label + init.name)
    bad = con.execute("SELECT min(ln) FROM (SELECT ln, unnest(t[2:]) AS d FROM il) "
                      "WHERE try_cast(d AS BIGINT) IS NULL").fetchall()[0][0]
    if bad is not None:
        raise DataFormatError(label + init.name, "document indexes must be whole numbers", int(bad))
    if clk.exists():
        _register_lines(con, clk, label + clk.name)
        run_sql(con, "CREATE TEMP TABLE cl AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), "
                  "' ') AS c FROM raw", label + clk.name)
        n_clk = con.execute("SELECT count(*) FROM cl").fetchall()[0][0]
        short = con.execute("SELECT min(ln) FROM il WHERE ln > ?", [n_clk]).fetchall()[0][0]
        if short is not None:
            raise DataFormatError(label + clk.name, f"has {n_clk} lines but {init.name} has more", int(short))
    else:
        run_sql(con, "CREATE TEMP TABLE cl AS SELECT ln, []::VARCHAR[] AS c FROM il", label + init.name)


def _load_displayed(con, init: Path, clk: Path, label: str, max_rows: int) -> None:
    """Table ``docs``: one row per displayed document (line, query, row index, position), checked against the
    limit and against the clicks line's length."""
    from ultr_core.logs.sql import run_sql
    run_sql(con, """CREATE TEMP TABLE docs AS SELECT ln, t[1] AS query_id, d::BIGINT AS row_index,
            row_number() OVER (PARTITION BY ln ORDER BY k) AS position FROM (
            SELECT ln, t, unnest(t[2:]) AS d, generate_subscripts(t[2:], 1) AS k FROM il) WHERE d <> '-1'""",
         label + init.name)
    n_shown = con.execute("SELECT count(*) FROM docs").fetchall()[0][0]
    if n_shown > max_rows:
        raise DataFormatError(label + init.name, f"{n_shown:,} displayed documents exceed the limit of "
                                                 f"{max_rows:,} for an ULTRA folder")
    if clk.exists():
        bad = con.execute("""SELECT d.ln, count(*) AS n, any_value(len(cl.c) - 1) AS m FROM docs d
                             JOIN cl USING (ln) GROUP BY d.ln HAVING count(*) > any_value(len(cl.c) - 1)
                             ORDER BY d.ln LIMIT 1""").fetchall()
        if bad:
            raise DataFormatError(label + clk.name, f"{bad[0][2]} clicks for {bad[0][1]} documents", int(bad[0][0]))


def _document_key(con, feat: Path, init: Path, label: str, notes: list) -> tuple[str, str]:
    """The join and the column that give a displayed document its id: a distinct feature vector, or the row index
    without a feature file (said in ``notes``)."""
    from ultr_core.logs.sql import _register_lines, run_sql
    if feat.is_file():
        _register_lines(con, feat, label + feat.name)
        # one id per distinct feature vector: (index, value) pairs without zeros, sorted, grouped
        run_sql(con, """CREATE TEMP TABLE fr AS SELECT (row_number() OVER (ORDER BY ln)) - 1 AS row_index, ln,
                list_sort(list_filter(list_transform(t[2:], lambda x: {'i': try_cast(split_part(x, ':', 1) AS INTEGER),
                                                                  'v': try_cast(split_part(x, ':', 2) AS DOUBLE)}),
                                      lambda x: x.v IS NULL OR x.i IS NULL OR x.v <> 0)) AS fv
                FROM (SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), ' ') AS t FROM raw
                      WHERE line IS NOT NULL AND trim(line) <> '')""", label + feat.name)
        bad = con.execute("SELECT min(ln) FROM fr WHERE len(list_filter(fv, lambda x: x.v IS NULL OR x.i IS NULL)) > 0"
                          ).fetchall()[0][0]
        if bad is not None:
            raise DataFormatError(label + feat.name, "features must be index:value pairs", int(bad))
        run_sql(con, """CREATE TEMP TABLE vid AS SELECT fv, (row_number() OVER (ORDER BY min_row)) - 1 AS doc_id
                     FROM (SELECT fv, min(row_index) AS min_row FROM fr GROUP BY fv)""", label + feat.name)
        n_rows, n_vec = con.execute("SELECT (SELECT count(*) FROM fr), (SELECT count(*) FROM vid)").fetchall()[0]
        out_of_range = con.execute("SELECT min(ln) FROM docs WHERE row_index < 0 OR row_index >= ?",
                                   [n_rows]).fetchall()[0][0]
        if out_of_range is not None:
            raise DataFormatError(label + init.name, f"document index out of range ({feat.name} has {n_rows:,} "
                                                     "rows)", int(out_of_range))
        key_join = "LEFT JOIN (SELECT fr.row_index, vid.doc_id FROM fr JOIN vid USING (fv)) k USING (row_index)"
        key = "k.doc_id"
        if n_vec < n_rows:
            notes.append(f"{n_rows - n_vec:,} of {n_rows:,} feature rows repeat an earlier row's vector: a "
                         "document is a distinct feature vector (as the official identifiability check)")
    else:
        key_join, key = "", "d.row_index"
        notes.append("no train/train.feature: a document is a row index of init_list")
    return key_join, key


def _label_join(con, lpath: Path, label: str) -> tuple[str, str]:
    """The select and join that add each displayed document's label (0 … MAX_LABEL), every bad line named."""
    from ultr_core.logs.sql import _register_lines, run_sql
    if not lpath.is_file():
        raise DataFormatError(label + lpath.name, "file not found (the labels are the truth to score against)")
    _register_lines(con, lpath, label + lpath.name)
    run_sql(con, "CREATE TEMP TABLE lb AS SELECT ln, string_split(regexp_replace(trim(line), '\\s+', ' ', 'g'), "
              "' ') AS y FROM raw", label + lpath.name)
    bad = con.execute("""SELECT d.ln FROM docs d LEFT JOIN lb USING (ln)
                         WHERE try_cast(lb.y[d.position + 1] AS INTEGER) IS NULL
                            OR try_cast(lb.y[d.position + 1] AS INTEGER) NOT BETWEEN 0 AND ?
                         ORDER BY d.ln LIMIT 1""", [MAX_LABEL]).fetchall()
    if bad:
        raise DataFormatError(label + lpath.name, "a displayed document has no label, or one that is not a "
                                                  f"whole number from 0 to {MAX_LABEL}, on this line",
                              int(bad[0][0]))
    lab_sql, lab_join = ", lb.y[d.position + 1]::INTEGER AS label", "LEFT JOIN lb USING (ln)"
    return lab_sql, lab_join
