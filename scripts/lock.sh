#!/usr/bin/env bash
# Refresh requirements/dev.lock, the pinned environment that tests, CI and the tour install.
#   bash scripts/lock.sh              re-resolve after editing pyproject.toml (keeps other pins)
#   bash scripts/lock.sh --upgrade    take the newest releases the ranges allow
# Then run the whole suite and read the notebook diffs: an upgrade is a change like any other.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null || python3 -m pip install -q uv
uv pip compile pyproject.toml --all-extras --universal --python-version 3.11 \
  --no-header --annotation-style line -o requirements/dev.lock "$@"
sed -i '1i # The development lock: every extra of pyproject.toml, pinned for Python >= 3.11 on any platform.\n# Made by `bash scripts/lock.sh` (uv pip compile); never edit by hand. tests/test_lock.py checks it.' requirements/dev.lock
echo "requirements/dev.lock: $(grep -c '==' requirements/dev.lock) pins"
