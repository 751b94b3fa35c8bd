"""The model layer's defaults, each written here once. The run context (``gaze.settings.context``)
takes its fields' defaults from this module, as it takes the sampling defaults from
``gaze.video.windows``; the caller, providers and structured calls below it use the same names,
so a library user who builds a ``Caller`` by hand gets what a run gets."""

CONCURRENCY = 32
"""Most backbone requests in flight at once."""
TEMPERATURE = 0.0
"""Sampling temperature of every call (0: the most likely answer, and a cacheable one)."""
MAX_RETRIES = 3
"""Retries per call after the first attempt (transport errors and malformed output alike)."""
REQUEST_TIMEOUT_S = 120.0
"""Total deadline of one request, seconds, first byte to last."""
RETRY_INITIAL_S = 0.5
"""First backoff pause after a transient error, seconds (doubles, with jitter)."""
RETRY_MAX_S = 30.0
"""Longest backoff pause, seconds; a server's longer Retry-After is capped to this."""
BREAKER_AFTER = 6
"""Calls in a row to one endpoint that got no reply after their retries before it gets no more
work (0: never)."""
MAX_REPLY_CHARS = 262_144
"""Longest model reply accepted, characters."""
MAX_FRAMES_PER_CALL = 192
"""Most frames one diagnosis request carries: an observer's, specialist's or critic's segment,
sent whole. Four windows of 16 frames up to a 64 s clip; a longer clip's segments grow to keep
it at ``SEGMENTS_PER_CLIP`` (twelve windows at 180 s), as far as the served model takes them
(``gaze.settings.served_layout``: a server built for 64 keeps four-window segments)."""
SEGMENTS_PER_CLIP = 4
"""Segments a clip is cut into by length before its segments grow past the base length
(subtask spans may cut more): what keeps a long clip's calls near a short one's."""
JUDGE_FRAMES = 32
"""Most frames one judge request carries: the PA/IA judges' clip (spread evenly) and one chunk
of the progress estimator's frames. Apart from the diagnosis calls' frames, so the layout of
those does not move the judges' scores."""
FRAMES_IN_FLIGHT = 512
"""Most frames a run's calls hold at once (8 calls of 64 frames, or two of a long clip's 192):
what bounds a long clip's memory, since a request in flight holds its frames."""
