"""The examples in ultr_core's docstrings run and print what they show."""
import doctest
import importlib
import pkgutil

import pytest

import ultr_core

MODULES = sorted(m.name for m in pkgutil.walk_packages(ultr_core.__path__, "ultr_core.")
                 if not m.name.endswith("__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"


def test_experiment_helper_examples():
    """Doctests of experiment scripts whose helpers compute a reported number (imported by path:
    experiments/ is not a package)."""
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "experiments"))
    try:
        modules = [importlib.import_module(name) for name in ("cld_pair_mix", "sparse_factor_bias")]
    finally:
        sys.path.remove(str(root / "experiments"))
    for module in modules:
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert result.attempted > 0 and result.failed == 0, (module.__name__, result)
