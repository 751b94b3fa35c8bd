"""Field metadata the settings share: LangGraph Studio, the CLI's help and ``description_of``
all read a field's description from here."""


def describe(text: str) -> dict[str, str]:
    """A settings field's metadata: its description."""
    return {"description": text}
