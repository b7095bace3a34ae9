#!/usr/bin/env bash
# Installs what the tests need (Python packages; Debian's chromium for the browser test)
# and runs the whole test suite.  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install -q -r requirements.txt
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing Debian chromium for the browser test …"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; the browser test will fail"
fi
exec python -m pytest -q "$@"
