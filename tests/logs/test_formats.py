"""The one table of log formats (ultr_core.logs.formats): every record complete, every reader present, and
every place that names formats derived from it."""
import importlib

import pytest

from ultr_core.logs.formats import FORMAT_NAMES, LOG_FORMATS, TEXT_FORMATS, accepted


@pytest.mark.parametrize("fmt", LOG_FORMATS, ids=lambda f: f.name)
def test_every_format_record_is_complete(fmt):
    assert fmt.name and fmt.label and fmt.accepted and fmt.help and fmt.document in ("query", "global")
    if fmt.kind == "text":
        module, fn = fmt.reader.split(":")
        assert callable(getattr(importlib.import_module(module), fn))
        assert fmt.columns[:5] == ("session_id", "query_id", "doc_id", "position", "click")
        assert callable(fmt.sniff)
    if fmt.kind == "tabular":
        assert fmt.extensions


def test_cli_upload_page_and_messages_derive_from_the_table(capsys):
    from ultr_core.__main__ import main
    from ultr_core.logs.mapping import FORMATS
    from ultr_core.logs.sniff import ACCEPTED
    assert tuple(FORMATS) == FORMAT_NAMES
    assert "; ".join(ACCEPTED) == accepted()
    with pytest.raises(SystemExit):
        main(["ig", "--help"])
    help_text = capsys.readouterr().out
    assert all(name in help_text for name in FORMAT_NAMES)
    src = open("pages/upload.py", encoding="utf-8").read()
    assert all(f'"{name}"' not in src for name in TEXT_FORMATS)          # no second list of names on the page


def test_format_pyclick_is_accepted_on_the_command_line(tmp_path, capsys):
    from ultr_core.__main__ import main
    f = tmp_path / "trainSample"
    f.write_text("q1\ta,b,c : b , a; q1\tb,a,c :; q1\tc,a,b : c;\n" * 20)
    assert main(["ig", str(f), "--format", "pyclick", "--estimate", "none"]) == 0
    assert "IDENTIFIABLE" in capsys.readouterr().out
