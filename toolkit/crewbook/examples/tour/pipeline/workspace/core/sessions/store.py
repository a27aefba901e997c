"""Session storage."""


def load(session_id: str) -> dict[str, str]:
    return {"id": session_id}
