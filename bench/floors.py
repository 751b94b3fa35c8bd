"""The least a command can do against the bench's stand-in, as scripts a new interpreter runs.

- ``floor``: import the openai SDK, build its client, make the critical path's calls one after
  the other with a one-line prompt, and end without the interpreter's teardown (as ``gaze``
  does).
- ``decoding``: the same, with the clip decoded in full beside the first call (PyAV, frame
  threads as gaze's reader has them, no conversion: what FFmpeg alone takes), and the second
  call made once both its reply and the decoding are done. gaze looks at every frame before
  its second stage ends (the last window's observer needs the end of the clip, the router its
  pixel evidence), so where decoding a clip outlasts the first call, no command that does so
  ends sooner: a 1080p clip's margin over ``floor`` is partly the decoder's, and over
  ``decoding`` it is gaze's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

FLOOR_SCHEMA = "Floor"
"""The schema name of the floors' calls."""

_CALLS = """
import openai

async def calls(url, count, instruction, between=None):
    client = openai.AsyncOpenAI(api_key="floor", base_url=url, max_retries=0)
    schema = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    for done in range(count):
        if done == 1 and between is not None:
            await between()
        await client.chat.completions.create(
            model="bench",
            messages=[{"role": "user", "content": instruction}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "SCHEMA_NAME", "schema": schema, "strict": True},
            },
        )
""".replace("SCHEMA_NAME", FLOOR_SCHEMA)

FLOOR_SCRIPT = (
    """
import asyncio, os, sys
"""
    + _CALLS
    + """
asyncio.run(calls(sys.argv[1], int(sys.argv[2]), sys.argv[3]))
sys.stdout.flush()
os._exit(0)
"""
)

DECODING_SCRIPT = (
    """
import asyncio, os, sys, threading, time

decoded = threading.Event()
frames = []

def decode(path):
    try:
        import av  # in the thread, beside the SDK's import, as a child's imports are

        with av.open(path) as container:
            stream = container.streams.video[0]
            stream.thread_type = "AUTO"
            frames.append((sum(1 for _ in container.decode(stream)), time.time()))
    except Exception as exc:
        print(f"cannot decode {path}: {exc}", file=sys.stderr, flush=True)
        os._exit(2)
    decoded.set()

threading.Thread(target=decode, args=(sys.argv[4],), daemon=True).start()
"""
    + _CALLS
    + """
async def decoding_done():
    await asyncio.to_thread(decoded.wait)

asyncio.run(calls(sys.argv[1], int(sys.argv[2]), sys.argv[3], decoding_done))
print(*frames[0])  # the frames decoded, and when the decoding ended
sys.stdout.flush()
os._exit(0)
"""
)


def floor_argv(url: str, calls: int, instruction: str, clip: Path | None = None) -> list[str]:
    """The command of ``floor``, or of ``decoding`` when given the clip to decode."""
    if clip is None:
        return [sys.executable, "-c", FLOOR_SCRIPT, url, str(calls), instruction]
    return [sys.executable, "-c", DECODING_SCRIPT, url, str(calls), instruction, str(clip)]
