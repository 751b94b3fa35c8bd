"""Event matching protocols and description-similarity judges (pure numpy/scipy, no I/O)."""
