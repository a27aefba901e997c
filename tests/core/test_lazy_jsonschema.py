"""`import_jsonschema`: `jsonschema` without compiling the ``iri`` grammar of
`rfc3987_syntax` at import (seconds of an MCP server's first call), the same checks."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.util import find_spec

import pytest

pytestmark = pytest.mark.skipif(find_spec("rfc3987_syntax") is None,
                                reason="rfc3987_syntax (jsonschema's iri check) not installed")

CHECK = """
import json, sys
{first}
V = js.Draft202012Validator
v = V({{"format": "iri"}}, format_checker=V.FORMAT_CHECKER)
before = "rfc3987_syntax" in sys.modules
answers = [v.is_valid(x) for x in ["http://example.com/\\u00fc", "not an iri", "http://a b"]]
print(json.dumps([before, answers, "rfc3987_syntax" in sys.modules]))
"""


def _run(first: str) -> list[object]:
    out = subprocess.run([sys.executable, "-c", CHECK.format(first=first)],
                         capture_output=True, text=True, check=True).stdout
    answer: list[object] = json.loads(out)
    return answer


def test_the_iri_grammar_waits_for_an_iri_check_and_answers_the_same() -> None:
    lazy = _run("from crewbook.core.lazy import import_jsonschema; js = import_jsonschema()")
    plain = _run("import jsonschema as js")
    assert lazy[0] is False  # jsonschema imported, the grammar not built
    assert plain[0] is True  # what a plain import does
    assert lazy[1] == plain[1] == [True, False, False]  # the same iri answers
    assert lazy[2] is True  # built when first needed


def test_the_mcp_tools_check_arguments_without_the_grammar() -> None:
    code = ("import sys\nfrom crewbook.core.toolbox import BY_NAME, check_arguments\n"
            "check_arguments(BY_NAME['crew_status'], {})\n"
            "print('rfc3987_syntax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
