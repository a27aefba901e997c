"""`Diff`, the result every comparison returns: frames, text, JSON, a display."""

from __future__ import annotations

from crewbook.compare import Diff, DiffEntry


def test_diff_result_shapes() -> None:
    entries = (DiffEntry("artifact", "added", "x"),
               DiffEntry("artifact", "changed", "y", "requires", ("a",), ("a", "b")),
               DiffEntry("edge", "removed", "a → y (requires)"))
    d = Diff("one", "two", entries)
    assert not d.empty
    assert d.counts() == {"added": 1, "removed": 1, "changed": 1}
    frame = d.frame()
    assert list(frame.columns) == ["section", "change", "item", "field", "before", "after",
                                   "note"]
    assert str(frame["change"].dtype) == "category"
    assert frame.loc[1, "after"] == ["a", "b"]
    data = d.to_dict()
    assert data["empty"] is False
    assert data["changes"][1]["before"] == ["a"]
    text = d.text()
    assert "artifact y requires: [a] → [a, b]" in text
    assert repr(d) == "<Diff 'one' → 'two': 1 added, 1 removed, 1 changed>"
    assert Diff("one", "two", ()).empty
    assert "no differences" in Diff("one", "two", ()).text()
    bundle = d._repr_mimebundle_()
    assert "crewbook-diff" in bundle["text/html"]
