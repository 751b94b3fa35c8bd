"""What the router and the specialists read of a segment (pure): the observations of its
windows and the pixel measurements that overlap it. The router node and the router call
``gaze.graph.early`` starts before the graph has loaded build their prompt from these same
texts, so the node can tell whether that call asked what it would ask."""

from __future__ import annotations

from collections.abc import Sequence

from gaze.graph.state import EventRecord, Observation, Segment


def observations_text(observations: Sequence[Observation], segment: Segment) -> str:
    lines = []
    for obs in sorted(observations, key=lambda o: o["window"]):
        if obs["window"] not in segment["windows"]:
            continue
        lines.append(
            f"window {obs['window']} ({obs['start_s']:.2f}-{obs['end_s']:.2f} s): "
            f"{obs['summary'] or '(no observation)'}"
        )
        lines += [f"  {s['subtask_id']}: {s['status']}" for s in obs["subtask_status"]]
        lines += [f"  t={n['time_s']:.2f}s {n['what']}" for n in obs["notable"]]
    return "\n".join(lines) or "(none)"


def pixel_hints_text(pixel_events: Sequence[EventRecord], segment: Segment) -> str:
    hits = [
        e
        for e in pixel_events
        if e["start_s"] <= segment["end_s"] and e["end_s"] >= segment["start_s"]
    ]
    if not hits:
        return "(no pixel signal fired in this segment)"
    return "\n".join(
        f"- {e['start_s']:.2f}-{e['end_s']:.2f} s {e['type']}: {e['description']} "
        f"[{'; '.join(e['evidence'])}]"
        for e in hits
    )


def router_texts(
    segments: Sequence[Segment],
    observations: Sequence[Observation],
    pixel_events: Sequence[EventRecord],
) -> list[tuple[Segment, str]]:
    """Each segment with the text the router scores it by."""
    return [
        (
            segment,
            observations_text(observations, segment)
            + "\nPixel measurements:\n"
            + pixel_hints_text(pixel_events, segment),
        )
        for segment in segments
    ]
