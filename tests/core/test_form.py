"""The one unknown-key guard every family's codec uses (`core.form.refuse_unknown_keys`)."""

from __future__ import annotations

import pytest

from crewbook.core.form import refuse_unknown_keys
from crewbook.errors import LoopRefused


def test_known_keys_pass() -> None:
    refuse_unknown_keys({"role": "qa"}, ("role", "verdict"), "a crew report")


def test_unknown_keys_are_refused_naming_the_first_with_a_suggestion() -> None:
    with pytest.raises(LoopRefused, match=r"a crew report has no key 'verdikt'.*'verdict'") \
            as refused:
        refuse_unknown_keys({"role": "qa", "verdikt": "go", "zz": 1}, ("role", "verdict"),
                            "a crew report")
    assert refused.value.code == "bad_report"
    with pytest.raises(LoopRefused, match=r"has no key 'zz'; keys: role, verdict"):
        refuse_unknown_keys({"zz": 1}, ("verdict", "role"), "a crew report")


@pytest.mark.parametrize(("codec", "data", "what"), [
    ("crewbook.crew.codec:parse_report", {"role": "qa", "verdict": "go", "summary": "s",
                                          "extra": 1}, "a crew report"),
    ("crewbook.autonomous.codec:parse_step", {"extra": 1}, "an autonomous step"),
    ("crewbook.pipeline.state:parse_report", {"stage": "a", "extra": 1}, "a stage report"),
])
def test_every_codec_says_it_the_same_way(codec: str, data: dict[str, object],
                                          what: str) -> None:
    from crewbook.core.family import resolve

    with pytest.raises(LoopRefused, match=f"{what} has no key 'extra'"):
        resolve(codec)(data)
