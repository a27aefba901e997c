"""Execute notebooks in place and keep them stable for nbval and git.

    python scripts/run_notebook.py notebooks/05_coordinator.ipynb [...]

Runs each notebook top to bottom in a fresh kernel (from the notebook's folder), then
drops what changes on every run (execution timestamps) and pins the kernelspec, so a
re-run that changes nothing leaves the file byte-identical.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def run(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    # widget state is front-end state, saved by JupyterLab on demand, not by a test run
    notebook.metadata.pop("widgets", None)
    notebook.metadata["kernelspec"] = KERNELSPEC
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        run(Path(name))
        print(f"executed {name}")
