"""Entry point: the `gaze` command group and its error contract.

Bad input of any kind ends in one line on stderr and exit code 2, never a traceback; an
unexpected fault ends in one line and exit code 1 (GAZE_DEBUG=1 shows the traceback).
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys

import click

from gaze import __version__
from gaze.cli import collector
from gaze.errors import GazeInputError
from gaze.models.protocol import NoReplyError
from gaze.redact import redact

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1

COMMANDS = {
    "diagnose": ("gaze.cli.diagnose_cmd", "diagnose", "Diagnose one clip."),
    "schema": ("gaze.cli.schema_cmd", "schema", "The failure codebook."),
    "clip": ("gaze.cli.clip_cmd", "clip", "Clip metadata and sampling windows."),
    "forge": ("gaze.cli.forge_cmd", "forge", "Synthetic clips with injected failures."),
    "bench": ("gaze.cli.bench_cmd", "bench", "Benchmark evaluators against human annotations."),
    "progress": ("gaze.cli.progress_metrics_cmd", "progress", "Task-progress curve metrics."),
    "convert": ("gaze.cli.convert_cmd", "convert", "Read peers' files into gaze's formats."),
    "view": ("gaze.cli.view_cmd", "view", "A static site over benchmark runs (and a server)."),
    "review": ("gaze.cli.review_cmd", "review", "Accept, fix and add events in a page: labels."),
    "probe": ("gaze.cli.probe_cmd", "probe", "How far a method can be trusted on your clips."),
}
"""Subcommand -> (module, attribute, one-line help). A command's module is imported only when
that command runs, so `gaze --version` or `gaze schema` never loads scipy or LangGraph."""


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute, _ = COMMANDS[name]
        command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, _, text) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="gaze", message="%(prog)s %(version)s")
def cli() -> None:
    """gaze: diagnose failures in generated robot-manipulation videos."""


def _fail(message: str, code: int) -> int:
    first_line = " ".join(redact(message).strip().split())
    print(f"gaze: error: {first_line}", file=sys.stderr)
    return code


class _Warnings(logging.Handler):
    """gaze's warnings (an endpoint of a pool going down) as one line on the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        print(f"gaze: warning: {redact(record.getMessage())}", file=sys.stderr)


def _show_warnings() -> None:
    logger = logging.getLogger("gaze")
    if not any(isinstance(h, _Warnings) for h in logger.handlers):
        logger.addHandler(_Warnings(logging.WARNING))


DECODING_COMMANDS = {"diagnose"}
"""Commands whose first work with a model is decoding a clip in a child process: the child starts
before their imports (the pixel default, without a model, decodes in the command itself)."""


def _decodes_in_a_child(args: list[str]) -> bool:
    if not args or args[0] not in DECODING_COMMANDS or {"--help", "-h"} & set(args):
        return False
    from gaze.environment import model_of

    return model_of(_model_option(args)) is not None


def _model_option(args: list[str]) -> str | None:
    """``--model``'s value, read before the command's options are parsed."""
    for here, arg in enumerate(args):
        if arg.startswith("--model="):
            return arg.split("=", 1)[1]
        if arg == "--model" and here + 1 < len(args):
            return args[here + 1]
    return None


def run(argv: list[str] | None = None) -> int:
    _show_warnings()
    if _decodes_in_a_child(sys.argv[1:] if argv is None else argv):
        from gaze.video import decoder_pool

        decoder_pool.warm()
    try:
        result = cli.main(args=argv, prog_name="gaze", standalone_mode=False)
        return result if isinstance(result, int) else 0
    except GazeInputError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    except NoReplyError as exc:  # the model server never answered: this clip failed
        return _fail(f"clip failed, the model server gave no reply: {exc}", EXIT_FAILED)
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


def _closed_streams_to_devnull() -> None:
    """A command started with its standard output or error closed (``>&-``; Python then holds
    None) writes its files as usual and says nothing, instead of failing on the first print."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115


def main() -> None:
    collector.tune(loads_while_running=_decodes_in_a_child(sys.argv[1:]))
    _closed_streams_to_devnull()
    code = run()
    # Everything is written and closed by now; skipping the interpreter's teardown of a few
    # hundred modules (about 0.4 s) is time a user waits for nothing.
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    os._exit(code)
