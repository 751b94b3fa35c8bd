"""Entry point: the `gaze` command group and its error contract.

Bad input of any kind ends in one line on stderr and exit code 2, never a traceback; an
unexpected fault ends in one line and exit code 1 (GAZE_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import os
import sys

import click

from gaze import __version__
from gaze.cli.bench_cmd import bench
from gaze.cli.clip_cmd import clip
from gaze.cli.diagnose_cmd import diagnose
from gaze.cli.forge_cmd import forge
from gaze.cli.progress_metrics_cmd import progress
from gaze.cli.schema_cmd import schema
from gaze.errors import GazeInputError

EXIT_BAD_INPUT = 2


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gaze", message="%(prog)s %(version)s")
def cli() -> None:
    """gaze: diagnose failures in generated robot-manipulation videos."""


cli.add_command(diagnose)
cli.add_command(schema)
cli.add_command(clip)
cli.add_command(forge)
cli.add_command(bench)
cli.add_command(progress)


def _fail(message: str, code: int) -> int:
    first_line = " ".join(message.strip().split())
    print(f"gaze: error: {first_line}", file=sys.stderr)
    return code


def run(argv: list[str] | None = None) -> int:
    try:
        result = cli.main(args=argv, prog_name="gaze", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except GazeInputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.exceptions.Abort:
        return _fail("interrupted", 130)
    except click.ClickException as exc:
        return _fail(exc.format_message(), EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug: say so in one line, keep the traceback for GAZE_DEBUG
        if os.environ.get("GAZE_DEBUG"):
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} (GAZE_DEBUG=1 for details)", 1)


def main() -> None:
    sys.exit(run())
