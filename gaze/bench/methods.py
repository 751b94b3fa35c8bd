"""The methods `bench run` knows, in a module light enough for the CLI to import at start-up."""

BASELINES = ("cot", "b1", "b2", "b3")
"""Control methods of the paper's comparison (``gaze.bench.baselines``)."""
METHODS = ("robogaze", "pixel", *BASELINES)
"""``robogaze`` is the graph; ``pixel`` the model-free default (``gaze.pixels.diagnosis``)."""
