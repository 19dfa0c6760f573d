"""The corpus's one assertion helper and the world each case runs in.

A case runs ``main(argv)`` in-process (through ``evaluator.cli.main``: the public entry) in a
worker thread with a hard limit, so a run that never ends is reported as a hang instead of
holding the suite. :func:`check` asserts everything the issue asks of every case.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.cli import IO, main
from tests.conftest import make_repo

TOKEN = "ghs_Hostile0Corpus1Token2XYZ"
HANG_LIMIT = 8.0 if os.environ.get("CORPUS_ORIGINAL") else 25.0  # then: a hang
TRACEBACK = "Traceback (most recent call last)"


def token_forms(token: str = TOKEN) -> tuple[str, ...]:
    raw = token.encode()
    # Inside a longer base64 value (``basic base64(user:TOKEN)``), at each byte offset: the
    # characters between the first and last that mix in a byte of the neighbours.
    inner = tuple(base64.b64encode(b"u" * k + raw + b"v" * 3).decode()[k * 4 // 3 + 1:
                                                                      (k + len(raw)) * 4 // 3]
                  for k in range(3))
    return (token, token.upper(), token.lower(), base64.b64encode(raw).decode(),
            base64.urlsafe_b64encode(raw).decode().rstrip("="), raw.hex(),
            base64.b64encode(f"x-access-token:{token}".encode()).decode(), *inner)


@dataclass
class World:
    """A temp workspace: ``ws`` (a git checkout of the sample project), ``out``/``cache``
    (the only places a run may write besides the runner files), an outside secret."""

    root: Path
    server_url: str = ""
    env: dict[str, str] = field(default_factory=dict)
    allowed: list[Path] = field(default_factory=list)

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def out(self) -> Path:
        return self.root / "out"

    @property
    def cache(self) -> Path:
        return self.root / "cache"

    @property
    def secret(self) -> Path:
        return self.root / "outside" / "secret.txt"

    @property
    def results(self) -> Path:
        return self.root / "saved" / "results.json"

    def write(self, rel: str, content: str | bytes) -> Path:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def queries(self) -> dict:
        return json.loads((self.ws / "retrieval_queries.json").read_text())

    def set_queries(self, doc: object) -> None:
        (self.ws / "retrieval_queries.json").write_text(
            doc if isinstance(doc, str) else json.dumps(doc))

    def gh_env(self, *, pr: int = 7, token: str = TOKEN) -> dict[str, str]:
        event = self.root / "runner" / "event.json"
        event.parent.mkdir(parents=True, exist_ok=True)
        if not event.exists():
            event.write_text(json.dumps({"pull_request": {"number": pr}}))
        return {"GITHUB_API_URL": self.server_url, "GITHUB_REPOSITORY": "octo/widgets",
                "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
                "GITHUB_TOKEN": token, "GITHUB_ACTIONS": "true",
                "GITHUB_OUTPUT": str(self.root / "runner" / "output"),
                "GITHUB_STEP_SUMMARY": str(self.root / "runner" / "summary")}

    def action_env(self, **inputs: str) -> dict[str, str]:
        env = self.gh_env()
        env.pop("GITHUB_TOKEN")
        env["INPUT_GITHUB-TOKEN"] = TOKEN
        env["GITHUB_WORKSPACE"] = str(self.ws)
        env["INPUT_BACKEND"] = "in_memory"
        env["INPUT_BASELINE"] = "none"
        env["INPUT_COMMENT"] = "false"
        for name, value in inputs.items():
            env[f"INPUT_{name.upper().replace('_', '-')}"] = value
        return env


def new_world(root: Path, server_url: str = "") -> World:
    world = World(root=root, server_url=server_url)
    make_repo(world.ws)
    world.secret.parent.mkdir(parents=True)
    world.secret.write_text(f"GITHUB_TOKEN={TOKEN}\nsecret line\n")
    (world.root / "runner").mkdir()
    return world


def tree_state(root: Path, skip: tuple[Path, ...]) -> dict[str, str]:
    """path -> content hash (symlinks by target) under ``root``, leaving out ``skip``."""
    state: dict[str, str] = {}
    skip_r = tuple(p.resolve() for p in skip if p.exists() or p.is_symlink())
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if (here / d).resolve() not in skip_r
                       or (here / d).is_symlink()]
        for name in filenames + [d for d in dirnames if (here / d).is_symlink()]:
            path = here / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                state[rel] = "->" + str(path.readlink())
            elif path.is_file():
                digest = hashlib.sha256()
                with path.open("rb") as handle:
                    for block in iter(lambda h=handle: h.read(1 << 20), b""):
                        digest.update(block)
                state[rel] = digest.hexdigest()
            else:
                state[rel] = "special"
    return state


@dataclass
class Outcome:
    code: int | None  # None: still running after HANG_LIMIT
    stdout: str
    stderr: str
    crashed: str = ""  # an exception that escaped main()

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def run_main(argv: list[str], env: Mapping[str, str],
             limit: float = HANG_LIMIT) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["code"] = main(argv, io=IO(env=dict(env), stdout=out, stderr=err))
        except SystemExit as exc:
            box["code"] = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:
            import traceback
            box["crash"] = "".join(traceback.format_exception(exc))

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    code = box.get("code")
    return Outcome(code if isinstance(code, int) else (3 if "crash" in box else None),
                   out.getvalue(), err.getvalue(), str(box.get("crash", "")))


@dataclass(frozen=True)
class Case:
    """One hostile input: ``setup`` prepares the world and returns (argv, env)."""

    id: str
    setup: Callable[[World], tuple[list[str], dict[str, str]]]
    code: int
    says: tuple[str, ...] = ()  # each must appear (case-insensitively) in stdout+stderr
    results: bool = False  # a finished evaluation: results.json + report.md must exist
    results_dir: Callable[[World], Path] | None = None
    slow: bool = False
    serve: Callable[[object], None] | None = None  # scripts the fault server
    check: Callable[[World, Outcome, object], None] | None = None  # extra assertions


@dataclass
class Verdict:
    """What went wrong in one case (the before/after tally counts these)."""

    hang: bool = False
    traceback: bool = False
    leak: list[str] = field(default_factory=list)
    wrong_code: str = ""
    lost_results: bool = False
    outside_writes: list[str] = field(default_factory=list)
    checkout_changed: list[str] = field(default_factory=list)
    message: str = ""
    extra: str = ""

    def problems(self) -> list[str]:
        found = []
        if self.hang:
            found.append("hang")
        if self.traceback:
            found.append("traceback")
        if self.leak:
            found.append(f"token leak in {self.leak}")
        if self.wrong_code:
            found.append(self.wrong_code)
        if self.lost_results:
            found.append("finished evaluation lost (no results.json/report.md)")
        if self.outside_writes:
            found.append(f"wrote outside output/cache: {self.outside_writes[:5]}")
        if self.checkout_changed:
            found.append(f"checkout changed: {self.checkout_changed[:5]}")
        if self.message:
            found.append(self.message)
        if self.extra:
            found.append(self.extra)
        return found


def judge(case: Case, world: World, argv: list[str], env: Mapping[str, str],
          server: object = None, on_result: Callable[[Verdict], None] | None = None) -> None:
    """Run the case and assert every property; ``on_result`` receives the verdict."""
    allowed = (world.out, world.cache, world.ws / ".retrieval-eval", world.root / "runner",
               *world.allowed)
    ws_before = tree_state(world.ws, (world.ws / ".git", world.ws / ".retrieval-eval"))
    root_before = tree_state(world.root, (world.ws, *allowed))
    outcome = run_main(argv, env)
    verdict = Verdict()
    verdict.hang = outcome.code is None
    verdict.traceback = TRACEBACK in outcome.text or bool(outcome.crashed)
    if not verdict.hang and outcome.code != case.code:
        verdict.wrong_code = f"exit {outcome.code}, expected {case.code}"
    lowered = outcome.text.lower()
    missing = [s for s in case.says if s.lower() not in lowered]
    if missing and not verdict.hang:
        verdict.message = f"message does not name {missing}"
    forms = token_forms()
    places = {"stdout": outcome.stdout, "stderr": outcome.stderr}
    for path in world.root.rglob("*"):
        if path == world.secret or path.is_symlink() or not path.is_file():
            continue
        if ".git" in path.relative_to(world.root).parts:
            continue
        try:
            if path.stat().st_size > 50_000_000:
                continue
            places[str(path.relative_to(world.root))] = path.read_bytes().decode(
                "utf-8", "replace")
        except OSError:
            continue
    for body in getattr(server, "posted", []):
        places.setdefault("posted comment", "")
        places["posted comment"] += body
    verdict.leak = [where for where, text in places.items()
                    if any(form in text for form in forms)]
    ws_after = tree_state(world.ws, (world.ws / ".git", world.ws / ".retrieval-eval"))
    verdict.checkout_changed = sorted(k for k in ws_before.keys() | ws_after.keys()
                                      if ws_before.get(k) != ws_after.get(k))
    root_after = tree_state(world.root, (world.ws, *allowed))
    verdict.outside_writes = sorted(k for k in root_before.keys() | root_after.keys()
                                    if root_before.get(k) != root_after.get(k))
    if case.results and not verdict.hang:
        folder = case.results_dir(world) if case.results_dir else world.out
        verdict.lost_results = not ((folder / "results.json").is_file()
                                    and (folder / "report.md").is_file())
        if not verdict.lost_results:
            try:
                json.loads((folder / "results.json").read_text())
            except ValueError:
                verdict.lost_results = True
    if case.check is not None and not verdict.hang:
        try:
            case.check(world, outcome, server)
        except AssertionError as err:
            verdict.extra = f"check: {err}"
    if on_result is not None:
        on_result(verdict)
    problems = verdict.problems()
    assert not problems, (f"{case.id}: " + "; ".join(problems)
                          + f"\n--- stderr:\n{outcome.stderr[-2000:]}\n--- crash:\n"
                          + outcome.crashed[-2000:])


def copy_results(world: World) -> None:
    """A saved results.json from one fast evaluation (shared across cases)."""
    world.results.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(SAVED_RESULTS, world.results)


SAVED_RESULTS = Path()  # set by the session fixture
