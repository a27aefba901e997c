#!/usr/bin/env bash
# Set up .venv with crewbook and JupyterLab (the versions the tests use), then open the
# guided tour on the bundled example project. Extra arguments go to `jupyter lab`:
#   bash scripts/tour.sh --no-browser --port 8890     (on a server, in a container)
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n== %s\n' "$*"; }

step "1/3 a virtual environment in .venv/ (Python ≥ 3.11)"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "crewbook needs Python 3.11 or newer; python3 is $(python3 -V)" >&2; exit 1; }
[ -x .venv/bin/python ] || python3 -m venv .venv

step "2/3 crewbook and JupyterLab, pinned by requirements/dev.lock (a few minutes the first time)"
.venv/bin/python -m pip install --disable-pip-version-check --progress-bar on \
  -c requirements/dev.lock -e '.[notebook]' 2>&1 \
  | grep --line-buffered -E '^(Collecting|Successfully|ERROR|error)' || true
.venv/bin/python -c 'import crewbook, jupyterlab' \
  || { echo "the install failed: see the messages above" >&2; exit 1; }
command -v dot >/dev/null || echo "note: Graphviz's 'dot' is not on PATH: drawings will show their DOT source"

step "3/3 JupyterLab on notebooks/00_tour.ipynb (Ctrl-C to stop)"
echo "The tour opens at /lab/tree/00_tour.ipynb: with --no-browser, open the URL printed below"
echo "(it carries the path and a login token)."
extra=()
if [ "$(id -u)" = 0 ]; then
  extra+=(--allow-root)  # JupyterLab refuses to start as root without it (containers, CI)
fi
# default_url, not a file argument: the printed URL then leads to the tour too, not only
# the browser JupyterLab opens itself (a file argument left the printed URL on the Launcher)
exec .venv/bin/jupyter lab --ServerApp.root_dir=notebooks \
  --LabApp.default_url=/lab/tree/00_tour.ipynb "${extra[@]}" "$@"
