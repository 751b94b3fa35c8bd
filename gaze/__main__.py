"""`python -m gaze` is the `gaze` command."""

from gaze.cli.main import main

main()
