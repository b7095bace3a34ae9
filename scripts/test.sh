#!/usr/bin/env bash
# Installs what the tests need (Python packages; Debian's chromium for the browser test), lints with ruff
# (E, F, I and B; pyproject.toml) and runs the whole test suite (both tiers) on two workers (pytest-xdist).  Extra arguments go
# to pytest.  Packages are installed without pip's serial byte-compiling and then compiled on both
# cores: this machine sets PYTHONDONTWRITEBYTECODE=1, so without .pyc files every process the tests
# start (servers, pool workers, CLI runs) would compile torch, pandas and streamlit from source
# again — measured: 536 s of tests without, 371 s with (#23).  sympy is compiled too: torch imports it with
# torch._dynamo when the first optimizer is built, in every process that trains (1.2 s of its 2.3 s; #33).
# Our own packages are compiled with them (0.14 s per process).  The packages' own test suites (never
# imported here: a quarter of the source) are skipped: 21 -> 13 s.
set -euo pipefail
cd "$(dirname "$0")/.."
pip_log=$(mktemp)
if ! python -m pip install -q --no-compile -r requirements.txt 2>"$pip_log"; then
  cat "$pip_log" >&2; rm -f "$pip_log"; exit 1
fi
grep -v "is ignored: it is neither a file nor a directory" "$pip_log" >&2 || true   # the image's extra indexes
rm -f "$pip_log"
python -m compileall -q -j 0 -x '/(pip|setuptools|IPython|jedi|parso|tests|testing/_internal)/' \
  "$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" ultr_core pages >/dev/null 2>&1 || true
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian chromium for the browser test …"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will fail"
fi
python -m ruff check --quiet . || { echo "ruff found the problems above (pyproject.toml [tool.ruff])" >&2; exit 1; }
exec python -m pytest -q -n 2 --dist worksteal -m "slow or not slow" --durations=25 "$@"
