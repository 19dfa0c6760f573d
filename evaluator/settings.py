"""The three readers of the option table (:data:`evaluator.core.options.OPTIONS`).

* :func:`build_parser` — the command line (argparse), one subcommand per command;
* :func:`read_options_file` — the options file (``.retrieval-eval.yml``), found under PATH
  unless ``--config`` names it;
* :func:`action_values` — the GitHub Action's inputs (``INPUT_<NAME>`` in the environment
  mapping it is given), paths confined to the workspace.

:func:`settings_for` layers them into one frozen :class:`Settings`. Path values from flags
and inputs are made absolute here (flags against the current directory, inputs against the
workspace), so later code never has to know where a path came from.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from evaluator import __version__
from evaluator.core import yamlfile
from evaluator.core.options import (
    OPTIONS,
    Option,
    Settings,
    build_settings,
    parse_baseline,
)
from evaluator.errors import ConfigError
from evaluator.paths import confine, runner_owned

CONFIG_NAMES = (".retrieval-eval.yml", ".retrieval-eval.yaml")
COMMAND_HELP = {
    "evaluate": "build the index, ask every question, score, gate",
    "comment": "post the PR comment from a saved results.json or a workflow run's artifact",
    "validate": "check a ground-truth file without building an index",
    "action": "run as the GitHub Action (inputs from INPUT_* variables)",
    "init": "draft a ground-truth file for a repository, or review one (--review)",
    "import": "convert other ground truth to retrieval_queries.json",
    "merge": "merge the parts of a sharded evaluation, then gate and comment as evaluate",
    "judge": "score given contexts against the gold facts with every judge column (JSON)",
}
FILE_COMMANDS = ("evaluate", "validate", "init", "import", "merge")  # read the options file


def _nargs(option: Option) -> str | None:
    if option.kind.many:
        return "+"
    return None if option.required or (option.choices and option.default is None) else "?"


def _help(option: Option) -> str:
    """The option's help, with the default a value option takes when it is not given."""
    shown = option.typed_default
    if shown is None or option.positional or "default" in option.help_text:
        return option.help_text
    return f"{option.help_text} (default: {shown.replace('%', '%%')})"


def _add(parser: argparse.ArgumentParser, option: Option) -> None:
    if option.positional:
        parser.add_argument(option.name, nargs=_nargs(option), default=None, help=option.help_text,
                            choices=option.choices or None, metavar=option.metavar)
        return
    assert option.flag is not None
    if option.kind.switch:
        parser.add_argument(option.flag, dest=option.name, action="store_const",
                            const=option.flag_sets, default=None,
                            help=option.help_text if option.flag_sets else option.flag_help)
        if option.negation:
            parser.add_argument(option.negation, dest=option.name, action="store_const",
                                const=not option.flag_sets, help=option.flag_help)
        return
    parser.add_argument(option.flag, dest=option.name, default=None, help=_help(option),
                        choices=option.choices or None, required=option.required,
                        metavar=option.metavar)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="retrieval-eval",
        description="Evaluate the retrieval quality of a NeuralMind code index against "
                    "ground-truth questions.",
        epilog="Exit codes: 0 all floors met, 1 a floor missed, 2 bad input or failed build, "
               "3 internal error.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command, help_text in COMMAND_HELP.items():
        p = sub.add_parser(command, help=help_text)
        mine = [o for o in OPTIONS if command in o.commands and (o.flag or o.positional)]
        # Positionals that must be given come before the optional ones (import FORMAT PATH).
        for option in sorted(mine, key=lambda o: not (o.positional and _nargs(o) is None)):
            _add(p, option)
    return parser


# ----------------------------------------------------------------------------- files


def read_yaml(path: Path, what: str = "options file") -> Any:
    try:
        return yamlfile.load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot read {what} {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{what} {path} is not UTF-8 text", hint="save it as UTF-8") from None
    except RecursionError:
        raise ConfigError(f"{what} {path} is nested too deeply") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{what} {path}{where} {yamlfile.what_is_wrong(err)}") from None


def find_options_file(root: Path | None, config: str | None, *,
                      reserved: tuple[Path, ...] = ()) -> Path | None:
    """``config`` when given (it must exist), else ``.retrieval-eval.yml`` under ``root``
    (a committed link to it must stay in the checkout, like every path it names)."""
    if config:
        path = Path(config)
        if path.is_dir():
            raise ConfigError(f"options file {config} is a folder, not a file",
                              hint=f"give the file itself, e.g. --config {path / CONFIG_NAMES[0]}")
        if not path.is_file():
            raise ConfigError(f"options file {config} does not exist")
        return path
    if root is None:
        return None
    broken = next((root / n for n in CONFIG_NAMES
                   if (root / n).is_symlink() and not (root / n).exists()), None)
    if broken is not None:  # a committed link to nothing, or a loop: never silently ignored
        raise ConfigError(f"options file {broken} is a link that leads nowhere (or to itself)",
                          hint="commit the options file itself, or a link to a file in the "
                               "checkout")
    found = next((root / n for n in CONFIG_NAMES if (root / n).is_file()), None)
    if found is not None:
        confine(found, root, setting=f"options file {found.name}", reserved=reserved)
    return found


def read_options_file(root: Path | None, config: str | None, *,
                      reserved: tuple[Path, ...] = ()) -> tuple[str, Any]:
    """The options file's name and parsed content (``{}`` when there is none); its paths
    confined to ``root`` (see :func:`confine_file_paths`)."""
    path = find_options_file(root, config, reserved=reserved)
    if path is None:
        return "options file", {}
    values = read_yaml(path) or {}
    if isinstance(values, dict) and root is not None:
        values = confine_file_paths(values, root, str(path), reserved=reserved)
    return str(path), values


def confine_file_paths(values: dict[str, Any], root: Path, name: str, *,
                       reserved: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The options file is the PR's to change: its paths must stay inside the checkout.

    Every path option with a file key (and ``baseline: file:``): relative paths are taken
    from the checkout (``root``); the result holds absolute ones (``queries`` stays relative
    to ``root``)."""
    paths = {o.file_key: o for o in OPTIONS if o.type == "path" and o.file_key}
    out = dict(values)
    for key, value in values.items():
        norm = str(key).strip().replace("_", "-")
        if norm in paths and isinstance(value, str) and value.strip():
            resolved = confine(value.strip(), root, setting=f"{name}: {norm}",
                               reserved=reserved)
            out[key] = (str(resolved.relative_to(root.resolve())) if norm == "queries"
                        else str(resolved))
        elif norm == "baseline" and isinstance(value, str):
            mode, file = parse_baseline(value)
            if mode == "file" and file is not None:
                out[key] = "file:" + str(confine(file, root, setting=f"{name}: baseline",
                                                 reserved=reserved))
    return out


# ----------------------------------------------------------------------------- action


def workspace_of(env: Mapping[str, str]) -> Path:
    return Path(env.get("GITHUB_WORKSPACE") or ".").resolve()


def inside(workspace: Path, value: str, name: str, reserved: tuple[Path, ...]) -> Path:
    """``value`` resolved against ``workspace``; an error when it leaves it or names
    version-control or runner state (:func:`evaluator.paths.confine`)."""
    return confine(value, workspace, setting=f"input {name}", place="the workspace",
                   reserved=reserved)


def _input(option: Option, raw: str, workspace: Path, reserved: tuple[Path, ...]) -> Any:
    """An input as given, for the option's own type to read (:mod:`evaluator.core.
    option_types`); paths are confined to the workspace here (and kept from version-control
    and runner state), the one rule of inputs."""
    name = str(option.action_input)
    if option.type == "path":
        return str(inside(workspace, raw, name, reserved))
    if option.type == "paths":
        return [str(inside(workspace, part, name, reserved)) for part in raw.split()]
    if option.name == "baseline":
        mode, value = parse_baseline(raw)
        if mode == "file" and value is not None:
            return f"file:{inside(workspace, value, 'baseline', reserved)}"
    return raw


def action_values(env: Mapping[str, str]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The command (``mode``), the inputs given and the Action's defaults for that command.

    Inputs are ``INPUT_<NAME>`` (upper case, hyphens kept); an empty input is not given."""
    workspace = workspace_of(env)
    reserved = runner_owned(env, workspace)

    def read(option: Option) -> str:
        return env.get(f"INPUT_{str(option.action_input).upper()}", "").strip()

    mode_option = next(o for o in OPTIONS if o.name == "mode")
    mode = read(mode_option).lower() or "evaluate"
    if mode not in mode_option.choices:
        raise ConfigError(f"invalid action inputs:\n  input mode: {mode!r} is not one of "
                          f"{', '.join(mode_option.choices)}")
    given: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for option in OPTIONS:
        if not option.action_input or mode not in option.commands:
            continue
        if read(option):
            given[option.name] = _input(option, read(option), workspace, reserved)
        if option.action_default is not None and option.file_key:
            default = option.action_default
            defaults[option.name] = (str(workspace / default) if option.type == "path"
                                     else default)
    if mode == "comment" and not given.get("results") and not given.get("run_id"):
        raise ConfigError("input results: mode comment needs the path of a results.json, "
                          "or run-id: the workflow run whose results artifact to post")
    if mode == "merge" and not given.get("parts"):
        raise ConfigError("input parts: mode merge needs the folder (or files) holding the "
                          "parts written by the shard jobs")
    given.setdefault("path", str(workspace))
    return mode, given, defaults


# ----------------------------------------------------------------------------- the token

#: Where the GitHub token comes from, first match wins: the Action's ``github-token`` input
#: (``INPUT_GITHUB-TOKEN``), then ``GITHUB_TOKEN``. A blank value does not count. This is the
#: one place that reads them (tests/test_design.py); the token then travels as
#: ``Settings.github_token`` and ``Deps.github_token`` to the HTTP client.
TOKEN_SOURCES = ("INPUT_GITHUB-TOKEN", "GITHUB_TOKEN")


def token_of(env: Mapping[str, str]) -> str | None:
    """The GitHub token per :data:`TOKEN_SOURCES`, surrounding whitespace removed."""
    for name in TOKEN_SOURCES:
        token = (env.get(name) or "").strip()
        if token:
            return token
    return None


# ----------------------------------------------------------------------------- layering


def flag_values(args: argparse.Namespace, command: str) -> dict[str, Any]:
    """The options given on the command line; relative paths made absolute."""
    out: dict[str, Any] = {}
    for option in OPTIONS:
        value = getattr(args, option.name, None)
        if command not in option.commands or value is None:
            continue
        if isinstance(value, list) and not option.kind.many:  # argparse reads --opt=-- so
            raise ConfigError(f"{option.flag or option.name}: {'--'!r} is not a value",
                              hint=f"give {option.flag or option.name} a value")
        if option.type == "path":
            value = str(Path(value).absolute())
        elif option.type == "paths":
            value = [str(Path(v).absolute()) for v in value]
        out[option.name] = value
    return out


def settings_for(command: str, given: Mapping[str, Any], *,
                 defaults: Mapping[str, Any] | None = None,
                 origin: str = "command line", env: Mapping[str, str] | None = None
                 ) -> Settings:
    """The settings of ``command``: the built-in defaults, ``defaults`` (the Action's), the
    options file (for the commands that read one), then ``given``. ``env`` names the
    runner's own files (:func:`evaluator.paths.runner_owned`), which no path in the options
    file may reach."""
    file_name, content = "options file", None
    if command in FILE_COMMANDS:
        root = None if given.get("example") else Path(given.get("path") or ".")
        if root is None or root.is_dir():
            reserved = runner_owned(env or {}, root) if root is not None else ()
            file_name, content = read_options_file(root, given.get("config"),
                                                   reserved=reserved)
    token = {"github_token": token_of(env or {})}
    return build_settings([("defaults", defaults), (file_name, content), (origin, given),
                           ("environment", token)], file_layer=1)
