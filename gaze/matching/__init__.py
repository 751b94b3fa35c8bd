"""Event matching protocols (``robogaze``, ``glide``), the assignment they share, span
arithmetic, and description-similarity judges. Pure numpy/scipy; the one exception, a model
judge of similarity, is handed in by the caller (``gaze.bench.llm_judge``)."""

PROTOCOLS = ("robogaze", "glide")


def protocol_version(protocol: str) -> int:
    """The implemented version of a matching protocol (``VERSION`` of its module)."""
    if protocol == "robogaze":
        from gaze.matching.robogaze import VERSION
    elif protocol == "glide":
        from gaze.matching.glide import VERSION
    else:
        raise ValueError(f"unknown protocol {protocol!r}")
    return VERSION
