"""``--config FILE.toml``: any option of a command, named as on the command line without its
dashes (``max-retries = 5`` or ``max_retries = 5``, ``only = ["droid_*"]``, ``no-cache =
true``). An option given on the command line wins over the file. The file's values (secrets
masked) are kept in ``click``'s context for the run to record."""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from gaze.errors import GazeInputError
from gaze.redact import redact

F = TypeVar("F", bound=Callable[..., Any])
META_KEY = "gaze.config"


def _load(ctx: click.Context, _param: click.Parameter, value: Path | None) -> None:
    if value is None:
        return
    try:
        raw = value.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except OSError as exc:
        raise GazeInputError(f"--config: cannot read {value}: {exc.strerror}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise GazeInputError(f"--config: {value} is not valid TOML ({exc})") from exc
    options = {
        opt.lstrip("-"): param
        for param in ctx.command.params
        if isinstance(param, click.Option) and param.name != "config"
        for opt in param.opts
    }
    values: dict[str, Any] = {}
    for key, setting in data.items():
        param = options.get(key.lstrip("-").replace("_", "-"))
        if param is None or param.name is None:
            raise GazeInputError(
                f"--config: {value} sets {key!r}, which is not an option of this command "
                f"(options: {', '.join(sorted(options))})"
            )
        if param.multiple and not isinstance(setting, list):
            setting = [setting]
        values[param.name] = setting
    ctx.default_map = {**(ctx.default_map or {}), **values}
    ctx.meta[META_KEY] = {
        "path": str(value),
        "sha256": hashlib.sha256(raw).hexdigest(),
        "values": {k: _masked(v) for k, v in values.items()},
    }


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def config_option() -> Callable[[F], F]:
    """Decorate a command with ``--config FILE.toml`` (read before its other options)."""
    return click.option(
        "--config",
        type=click.Path(path_type=Path, dir_okay=False),
        is_eager=True,
        expose_value=False,
        callback=_load,
        help="A TOML file of this command's options (names without dashes, e.g. "
        "'max-retries = 5'); the command line wins over it. Recorded in run.json.",
    )


def used_config() -> dict[str, Any] | None:
    """The ``--config`` file the current command read (path, hash, values), if any."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.meta.get(META_KEY)
