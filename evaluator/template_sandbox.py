"""The Jinja2 sandbox the report templates render in: the only module that imports jinja2.

Templates live in the top-level ``templates/`` folder (packaged as ``evaluator/templates``).
``StrictUndefined`` makes a template typo fail loudly. A user template (from the repository
under test: hostile input) renders in a sandbox that cannot reach Python internals, with a
time and size budget (:data:`TEMPLATE_SECONDS`, :data:`TEMPLATE_MAX_CHARS`), no huge numbers
passed to its filters, and a loader confined to its folder (no symlink out, at most
:data:`TEMPLATE_MAX_BYTES`). A user template can extend the default one:
``{% extends "builtin/comment.md.j2" %}`` and override its blocks.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2
import jinja2.exceptions
import jinja2.filters
import jinja2.sandbox
from markupsafe import Markup

from evaluator.core.measures import label
from evaluator.errors import InputError
from evaluator.escaping import (
    fmt_blank_delta,
    fmt_delta,
    fmt_delta_short,
    fmt_rank,
    fmt_signed,
    fmt_value,
    md_code,
    md_escape,
)
from evaluator.paths import confine, regular_file


def _finalize(value: object) -> object:
    if isinstance(value, Markup):
        return value
    if isinstance(value, bool | int | float) or value is None:
        return Markup(str(value))
    return Markup(md_escape(value))


def _plain(value: object) -> object:
    return value


def templates_dir() -> Path:
    """The packaged templates (wheel) or the repository's ``templates/`` (editable install)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "comment.md.j2").is_file():
            return candidate
    raise InputError("the default templates are missing from this installation")


# A template from the repository renders under a budget: this much time and output at most.
TEMPLATE_SECONDS = 5.0
TEMPLATE_MAX_CHARS = 4_000_000
_MAX_ARG = 100_000  # the largest number a template may pass to a function or filter
_WIDE_FORMAT = re.compile(r"(?:%[-#0 +]*|\{[^}]*:[^}]*?)(\d{6,})")


class TemplateBudgetExceeded(Exception):
    """A user template went over its time or size budget (internal; becomes InputError)."""


def _check_args(args: Sequence[object], kwargs: Mapping[str, object]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_ARG:
            raise jinja2.exceptions.SecurityError(
                f"the number {value} is too large for a template (at most {_MAX_ARG:,})")
        if isinstance(value, str) and _WIDE_FORMAT.search(value):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")


class _BudgetSandbox(jinja2.sandbox.SandboxedEnvironment):
    """The sandbox, plus: no huge repetitions or powers, no huge numeric arguments, and a
    deadline checked on every call (the line tracer in :func:`render_budgeted` covers
    loops that call nothing)."""

    intercepted_binops = frozenset({"*", "**"})
    deadline: float = float("inf")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > 64:
                raise jinja2.exceptions.SecurityError("an exponent that large is not allowed")
            if _whole(left) and _whole(right) and right > 0 and \
                    abs(left).bit_length() * right > MAX_INT_BITS:
                raise jinja2.exceptions.SecurityError("a power that large is not allowed")
        elif _whole(left) and _whole(right):  # one multiplication of huge numbers is one C call
            if abs(left).bit_length() + abs(right).bit_length() > MAX_INT_BITS:
                raise jinja2.exceptions.SecurityError("a product that large is not allowed")
        else:
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) \
                        and _size(seq) * times > TEMPLATE_MAX_CHARS:
                    raise TemplateBudgetExceeded(
                        f"a repetition of {_size(seq) * times:,} characters or items is over "
                        f"the {TEMPLATE_MAX_CHARS:,} limit (size budget)")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        if time.monotonic() > __self.deadline:
            raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                         "(time budget)")
        _check_args(args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and _WIDE_FORMAT.search(owner):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")
        if isinstance(owner, str):  # a string method builds its result in one C call
            args = _sized_str_call(owner, getattr(__obj, "__name__", ""), args)
        return super().call(__context, __obj, *args, **kwargs)


#: The most bits an integer a template computes may hold (a 1,233-digit number).
MAX_INT_BITS = 4096


def _size(seq: str | list[Any] | tuple[Any, ...]) -> int:
    """Characters of a string; items of a sequence, a string item counting its characters
    (``["x" * 3999999] * 500`` joins to two billion)."""
    if isinstance(seq, str):
        return len(seq)
    return sum(len(item) if isinstance(item, str) else 1 for item in seq)


@jinja2.pass_eval_context
def _join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> Any:
    """Jinja's ``join``, once its result is known to fit the size budget."""
    return _JOIN(eval_ctx, _joinable(value, str(d)), d, attribute)


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _over(size: int, what: str) -> None:
    if size > TEMPLATE_MAX_CHARS:
        raise TemplateBudgetExceeded(f"{what} of {size:,} characters is over the "
                                     f"{TEMPLATE_MAX_CHARS:,} limit (size budget)")


def _joinable(value: Any, separator: str) -> list[Any]:
    """``value``'s items (read once: a generator is passed on as a list), once their join
    with ``separator`` is known to fit the size budget."""
    items = list(value)
    _over(sum(len(str(i)) for i in items) + len(separator) * max(0, len(items) - 1), "a join")
    return items


def _sized_str_call(text: str, method: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """The arguments of ``text.method(*args)``, once the result's size is known to fit the
    budget: ``join``'s items (read once, so a generator is passed on as a list), what
    ``replace`` and ``expandtabs`` would grow to."""
    if method == "join" and args:
        return (_joinable(args[0], text), *args[1:])
    if method == "replace" and len(args) >= 2 and isinstance(args[0], str) and \
            isinstance(args[1], str):
        count = text.count(args[0]) if args[0] else len(text) + 1
        _over(len(text) + count * max(0, len(args[1]) - len(args[0])), "a replacement")
    if method == "expandtabs":
        size = args[0] if args and _whole(args[0]) else 8
        _over(len(text) + text.count("\t") * max(0, size), "expanded tabs")
    return args


def _guard_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _check_args(args[1:], kwargs)
        if args and isinstance(args[0], str) and func is _FORMAT and \
                _WIDE_FORMAT.search(args[0]):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")
        return func(*args, **kwargs)
    for attr in ("jinja_pass_arg",):
        if hasattr(func, attr):
            setattr(guarded, attr, getattr(func, attr))
    return guarded


_FORMAT = jinja2.filters.FILTERS["format"]
_JOIN = jinja2.filters.FILTERS["join"]
_SIZED_FILTERS = ("center", "indent", "wordwrap", "truncate", "format", "batch", "slice",
                  "filesizeformat", "round")


TEMPLATE_MAX_BYTES = 1024 * 1024


class _ConfinedLoader(jinja2.FileSystemLoader):
    """A repository's template folder. Every file a template loads from it (``include``,
    ``import``, ``extends``) must be a regular file inside the folder once symlinks are
    followed, and at most :data:`TEMPLATE_MAX_BYTES`: a committed link to
    ``/proc/self/environ`` must not put the runner's environment into the comment."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        root = Path(self.searchpath[0])
        path = root.joinpath(*jinja2.loaders.split_template_path(template))
        if not path.exists() and not path.is_symlink():
            raise jinja2.TemplateNotFound(template)
        confine(path, root, setting=f"template {template!r}")
        regular_file(path, what="template")
        if path.stat().st_size > TEMPLATE_MAX_BYTES:
            raise InputError(f"template {template!r} is larger than "
                             f"{TEMPLATE_MAX_BYTES // 1024} KiB")
        return super().get_source(environment, template)


def environment(template: Path | None = None, *, markdown: bool = True) -> jinja2.Environment:
    builtin = jinja2.FileSystemLoader(str(templates_dir()))
    loaders: list[jinja2.BaseLoader] = []
    if template is not None:
        loaders.append(_ConfinedLoader(str(template.parent)))
    loaders += [jinja2.PrefixLoader({"builtin": builtin}), builtin]
    # Sandboxed: a template from the repository under test must not reach Python internals.
    env = _BudgetSandbox(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=_finalize if markdown else _plain,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(md=lambda v: Markup(md_escape(v)), code=md_code, value=fmt_value,
                       delta=fmt_delta, blank_delta=fmt_blank_delta, rank=fmt_rank,
                       delta_short=fmt_delta_short, signed=fmt_signed,
                       label=lambda m: Markup(md_escape(label(m))))
    if template is not None:
        for name in _SIZED_FILTERS:
            if name in env.filters:
                env.filters[name] = _guard_filter(env.filters[name])
        env.filters["join"] = _join
        env.globals.pop("lipsum", None)
    return env


def render_budgeted(tmpl: jinja2.Template, env: jinja2.Environment, values: Mapping[str, Any],
                     ) -> str:
    """Render under :data:`TEMPLATE_SECONDS` and :data:`TEMPLATE_MAX_CHARS`.

    A line tracer runs only in the template's compiled code (not in Python libraries), so a
    nested loop that calls nothing is stopped too; the output is counted as it streams.
    """
    deadline = time.monotonic() + TEMPLATE_SECONDS
    if isinstance(env, _BudgetSandbox):
        env.deadline = deadline

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and time.monotonic() > deadline:
            raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                         "(time budget)")
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return None if frame.f_code.co_filename.endswith(".py") else local

    previous = sys.gettrace()
    parts: list[str] = []
    size = 0
    sys.settrace(tracer)
    try:
        for chunk in tmpl.generate(**values):
            size += len(chunk)
            if size > TEMPLATE_MAX_CHARS:
                raise TemplateBudgetExceeded(f"the output is over {TEMPLATE_MAX_CHARS:,} "
                                             "characters (size budget)")
            if time.monotonic() > deadline:
                raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                             "(time budget)")
            parts.append(chunk)
    finally:
        sys.settrace(previous)
    return "".join(parts)


def render_template(template: Path | None, name: str, values: Mapping[str, Any]) -> str:
    """``values`` through the user's ``template`` (sandboxed, under its budget) or the
    built-in ``name``; any way a template fails is one :class:`InputError` naming it."""
    env = environment(template, markdown=name.endswith(".md.j2"))
    target = template.name if template is not None else name
    try:
        tmpl = env.get_template(target)
        return tmpl.render(**values) if template is None else render_budgeted(tmpl, env,
                                                                              values)
    except TemplateBudgetExceeded as err:
        raise InputError(f"template {template} stopped: {err}",
                         hint="simplify the template") from None
    except RecursionError:
        raise InputError(f"template {target} recurses too deeply") from None
    except UnicodeDecodeError:
        raise InputError(f"template {target} is not UTF-8 text") from None
    except jinja2.TemplateSyntaxError as err:
        raise InputError(f"template {err.filename or target} line {err.lineno}: "
                         f"{err.message}") from None
    except jinja2.TemplateNotFound as err:
        raise InputError(f"template {err.name} not found") from None
    except jinja2.UndefinedError as err:
        raise InputError(f"template {target} failed to render: {err.message}") from None
    except jinja2.exceptions.SecurityError as err:
        raise InputError(f"template {target} is not allowed: {err}") from None
    except jinja2.TemplateError as err:
        raise InputError(f"template {target} failed to render: {err}") from None
    except InputError:
        raise
    except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError) as err:
        if template is None:  # a built-in template: a bug of ours, shown as one
            raise
        raise InputError(f"template {target} failed to render: {err}",
                         hint="fix the expression in the template") from None
