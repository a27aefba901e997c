"""The drawing layer stays light: graphviz and IPython load only when a Digraph is asked for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

HEAVY = ("graphviz", "IPython", "matplotlib", "ipywidgets", "jinja2")

SCRIPT = textwrap.dedent(f"""
    import json, sys
    def loaded():
        return sorted(m for m in {HEAVY!r} if m in sys.modules)
    import crewbook, crewbook.draw
    steps = {{"import": loaded()}}
    schema = crewbook.get_schema("spec-driven")
    schema.dot(); schema.mermaid()
    steps["dot"] = loaded()
    schema.graph()
    steps["graph"] = loaded()
    print(json.dumps(steps))
""")


def test_heavy_modules_load_only_when_needed() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=60, check=True)
    steps = json.loads(done.stdout)
    assert steps["import"] == []
    assert steps["dot"] == []
    assert steps["graph"] == ["graphviz"]
