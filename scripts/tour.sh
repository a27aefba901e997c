#!/usr/bin/env bash
# Set up a .venv with crewbook and JupyterLab, then open the guided tour on the bundled
# example project. Extra arguments go to `jupyter lab` (e.g. --no-browser --port 8890).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e '.[dev]'
extra=()
if [ "$(id -u)" = 0 ]; then
  extra+=(--allow-root)  # JupyterLab refuses to start as root without it (containers, CI)
fi
exec .venv/bin/jupyter lab notebooks/00_tour.ipynb "${extra[@]}" "$@"
