"""Batch APIs (OpenAI Batch, Gemini batch mode): about half the price of live calls, results
within a day.

A batch run advances every clip stage by stage. Each ``gaze bench run --batch-api`` runs the
clips' graphs against ``DeferredBackbone``s: a request whose reply a collected batch holds is
answered at once; any other request is registered and its clip stops (``CallDeferred``). What
the round registered goes out as one batch job per backbone (``jobs``); the next round collects
the finished jobs and takes every clip one stage further.
"""
