"""Execute notebooks in place and keep them stable for nbval and git.

    python scripts/run_notebook.py notebooks/05_coordinator.ipynb [...]

Runs each notebook top to bottom in a fresh kernel (from the notebook's folder), then
drops what changes on every run (execution timestamps) and pins the kernelspec, so a
re-run that changes nothing leaves the file byte-identical.

Widget state is kept, so that a reader who opens the notebook without running it sees
the widgets (JupyterLab renders them from ``metadata.widgets``), not their text repr.
nbclient records every widget model the kernel ever opened under a random UUID; we keep
only the models a saved output shows (and the models they reference), and rename them
``00000000-0000-4000-8000-000000000001``… in the order the outputs show them, so the
saved state is as small as it can be and the same on every run.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: How a widget's state names another model (ipywidgets' serializer).
REFERENCE = re.compile(r"IPY_MODEL_([0-9a-f]{32}|[0-9a-f-]{36})")


def stable_id(n: int) -> str:
    """The n-th kept model's id: a valid UUID (version 4 layout), same on every run."""
    return f"00000000-0000-4000-8000-{n:012d}"


def keep_widget_state(notebook: Any) -> None:
    """Keep the widget models the outputs show (and those they reference), renamed in
    order of appearance; drop the whole state when no output shows a widget."""
    saved = notebook.metadata.get("widgets", {}).get(WIDGET_STATE, {})
    models: dict[str, Any] = saved.get("state", {})
    views = [out["data"][WIDGET_VIEW] for cell in notebook.cells
             for out in cell.get("outputs", []) if WIDGET_VIEW in out.get("data", {})]
    order: list[str] = []
    queue = [view["model_id"] for view in views]
    while queue:
        model_id = queue.pop(0)
        if model_id in order or model_id not in models:
            continue
        order.append(model_id)
        text = json.dumps(models[model_id]["state"], sort_keys=True)
        queue += REFERENCE.findall(text)
    renamed = {old: stable_id(n) for n, old in enumerate(order, start=1)}

    def rename(text: str) -> str:
        return REFERENCE.sub(lambda m: "IPY_MODEL_" + renamed.get(m.group(1), m.group(1)),
                             text)

    for view in views:
        view["model_id"] = renamed.get(view["model_id"], view["model_id"])
    if not renamed:
        notebook.metadata.pop("widgets", None)
        return
    state = {renamed[old]: json.loads(rename(json.dumps(models[old], sort_keys=True)))
             for old in order}
    notebook.metadata["widgets"] = {WIDGET_STATE: {
        "state": state, "version_major": saved.get("version_major", 2),
        "version_minor": saved.get("version_minor", 0)}}


def run(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", store_widget_state=True,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
    keep_widget_state(notebook)
    notebook.metadata["kernelspec"] = KERNELSPEC
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        run(Path(name))
        print(f"executed {name}")
