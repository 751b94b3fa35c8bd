"""The six dimensions a clip is assessed on (DESIGN section 3), in the codebook's order.

Their names alone, without the codebook's models: the graph's records and the agents name
dimensions before a run's first request, which needs no codebook (its models took 5 ms to
build there).
"""

from __future__ import annotations

from typing import Literal, get_args

DimensionName = Literal[
    "task_progress",
    "instruction_consistency",
    "object_scene_consistency",
    "robot_body_consistency",
    "physical_plausibility",
    "visual_quality",
]
DIMENSIONS: tuple[DimensionName, ...] = get_args(DimensionName)
