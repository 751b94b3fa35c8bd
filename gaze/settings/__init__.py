"""Run settings: what a run computes, how it goes, the context that joins them (LangGraph's
context schema), and the caller they describe. The graph, ``gaze.diagnose``, ``bench`` and the
CLI all take their settings, and every default, from here."""
