"""How a run goes: limits, cache, retries' pauses, deadlines, the breaker and prices. They
change how fast and how reliably a run gets its answers (and what it is said to cost), never
what the answers are: a batch run may resume under other ones."""

from __future__ import annotations

from dataclasses import dataclass, field

from gaze.models import defaults as model_defaults
from gaze.settings.describe import describe


@dataclass(kw_only=True)
class Execution:
    """The settings that decide how a run goes (each recorded in the report)."""

    endpoint_concurrency: int = field(
        default=0,
        metadata=describe(
            "Most requests in flight at any one endpoint of a pool (0: only --concurrency "
            "limits them); a pool file may set it per endpoint."
        ),
    )
    concurrency: int = field(
        default=model_defaults.CONCURRENCY,
        metadata=describe("Most backbone requests in flight at once."),
    )
    frames_in_flight: int = field(
        default=model_defaults.FRAMES_IN_FLIGHT,
        metadata=describe(
            "Most frames a run's calls hold at once (a request in flight holds its frames): "
            "what bounds a long clip's memory. Raise it when a server with many slots waits "
            "on a single long clip."
        ),
    )
    use_cache: bool = field(
        default=True,
        metadata=describe("Answer repeated calls from the response cache (GAZE_CACHE_DIR)."),
    )
    retry_initial_s: float = field(
        default=model_defaults.RETRY_INITIAL_S,
        metadata=describe(
            "First backoff pause after a transient error, seconds (doubles, with jitter)."
        ),
    )
    retry_max_s: float = field(
        default=model_defaults.RETRY_MAX_S,
        metadata=describe(
            "Longest backoff pause, seconds; a server's longer Retry-After is capped to this."
        ),
    )
    request_timeout_s: float = field(
        default=model_defaults.REQUEST_TIMEOUT_S,
        metadata=describe(
            "Total deadline of one request, seconds, first byte to last (a server that "
            "trickles bytes cannot keep a request alive past it)."
        ),
    )
    clip_timeout_s: float = field(
        default=1800.0,
        metadata=describe(
            "Deadline of one clip's whole diagnosis, seconds; past it the clip fails "
            "(a batch records it and redoes it on resume)."
        ),
    )
    breaker_after: int = field(
        default=model_defaults.BREAKER_AFTER,
        metadata=describe(
            "Calls in a row to one endpoint that got no reply after all their retries (with "
            "no success between them) after which the run sends it no more work and its clips "
            "fail at once (0: never). Failed attempts that a retry recovers do not count."
        ),
    )
    max_reply_chars: int = field(
        default=model_defaults.MAX_REPLY_CHARS,
        metadata=describe(
            "Longest model reply accepted, characters; a longer one is a failed attempt, "
            "never fed back to the model or cached."
        ),
    )
    prices_file: str | None = field(
        default=None,
        metadata=describe(
            "JSON price table extending the list prices ({'models': {'provider:model': "
            "{'input', 'cached_input', 'output'}}}, USD per million tokens). None: GAZE_PRICES."
        ),
    )
    usd_per_mtok_in: float = field(
        default=0.0,
        metadata=describe(
            "Price of a million input tokens, USD, overriding the price table for every model "
            "(0: use the table)."
        ),
    )
    usd_per_mtok_out: float = field(
        default=0.0,
        metadata=describe("Price of a million output tokens, USD, for the cost estimate."),
    )
    review: bool = field(
        default=False,
        metadata=describe(
            "Pause before the report for a person (LangGraph Studio, or a graph built with a "
            "checkpointer): the events found are shown, and the run resumes with a decision "
            "per event (accept, reject with a reason, edit) and the events it missed "
            "(gaze.schema.review.ReviewAnswer)."
        ),
    )
