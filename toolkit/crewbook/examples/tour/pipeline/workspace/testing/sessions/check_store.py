from core.sessions.store import load


def test_load() -> None:
    assert load("a")["id"] == "a"
