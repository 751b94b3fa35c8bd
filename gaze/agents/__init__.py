"""One module per agent role; each builds its prompt and output schema and asks the caller.
Choosing among outputs (routing, verification, merging) is done by pure functions here too.

    from gaze.agents import ground, observe_windows, score_segments, route, examine, criticise
"""

from typing import TYPE_CHECKING

from gaze.lazy import lazy_members

if TYPE_CHECKING:
    from gaze.agents.critic import criticise, merge, verify
    from gaze.agents.grounding import SceneMemory, TaskMemory, ground
    from gaze.agents.judges import judge_axis, progress_pairs, progress_sequence
    from gaze.agents.observer import WindowObservation, observe_windows
    from gaze.agents.router import route, score_segments
    from gaze.agents.specialist import examine, to_hypotheses

__getattr__ = lazy_members(
    __name__,
    {
        "criticise": "critic",
        "merge": "critic",
        "verify": "critic",
        "SceneMemory": "grounding",
        "TaskMemory": "grounding",
        "ground": "grounding",
        "judge_axis": "judges",
        "progress_pairs": "judges",
        "progress_sequence": "judges",
        "WindowObservation": "observer",
        "observe_windows": "observer",
        "route": "router",
        "score_segments": "router",
        "examine": "specialist",
        "to_hypotheses": "specialist",
    },
)

__all__ = [
    "SceneMemory",
    "TaskMemory",
    "WindowObservation",
    "criticise",
    "examine",
    "ground",
    "judge_axis",
    "merge",
    "observe_windows",
    "progress_pairs",
    "progress_sequence",
    "route",
    "score_segments",
    "to_hypotheses",
    "verify",
]
