"""The diagnosis graph: state, run context, routing, and ``build_graph()``."""
