"""The release workflow's own scripts, run offline: the tag/version/changelog check, and the
released action.yml committed on no branch with the version and major tags moved to it
(pushed to a local bare repository standing in for GitHub).

The image build and push, and the GitHub release, are third-party actions and `gh`; they need
GitHub and are not run here (the workflow is linted with the others in test_code_quality).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from evaluator import __version__
from tests.conftest import git

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
STEPS = {step.get("name"): step for step in WORKFLOW["jobs"]["release"]["steps"]}
IDENTITY = ("-c", "user.email=t@example.com", "-c", "user.name=t")
DIGEST = "sha256:" + "0123456789abcdef" * 4  # what docker/build-push-action outputs


def _script(name: str) -> str:
    step = STEPS[name]
    assert "${{" not in step["run"], "values reach the script through env, never inline"
    return step["run"]


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "evaluator").mkdir(parents=True)
    shutil.copy(ROOT / "evaluator" / "__init__.py", repo / "evaluator" / "__init__.py")
    shutil.copy(ROOT / "CHANGELOG.md", repo / "CHANGELOG.md")
    shutil.copy(ROOT / "action.yml", repo / "action.yml")
    return repo


def _check(repo: Path, tag: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    temp = repo.parent / "runner-temp"
    temp.mkdir(exist_ok=True)
    output = repo.parent / "github-output"
    output.write_text("")
    proc = _bash(_script("Check the tag, the version and the changelog"), repo,
                 {"TAG": tag, "RUNNER_TEMP": str(temp), "GITHUB_OUTPUT": str(output),
                  "GITHUB_REPOSITORY": "Some-Owner/Neuralmind-Retrieval-Eval"})
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if line)
    return proc, outputs


def test_the_tag_of_the_current_version_passes_with_its_notes(checkout: Path):
    proc, outputs = _check(checkout, f"v{__version__}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    major = __version__.split(".")[0]
    assert outputs == {"version": __version__, "major": f"v{major}",
                       "image": "ghcr.io/some-owner/neuralmind-retrieval-eval"}
    notes = (checkout.parent / "runner-temp" / "notes.md").read_text()
    changelog = (ROOT / "CHANGELOG.md").read_text()
    section = changelog.split(f"## [{__version__}]", 1)[1].split("\n## [", 1)[0]
    assert notes.strip() and notes.strip() == section.split("\n", 1)[1].strip()


@pytest.mark.parametrize(("tag", "says"), [
    ("v99.0.0", "__version__ is"),
    ("v1.2", "is not vMAJOR.MINOR.PATCH"),
    ("v1.2.3-rc1", "is not vMAJOR.MINOR.PATCH"),
])
def test_a_tag_that_is_not_the_version_fails(checkout: Path, tag: str, says: str):
    proc, _ = _check(checkout, tag)
    assert proc.returncode != 0
    assert "::error" in proc.stdout and says in proc.stdout


def test_a_version_without_changelog_notes_fails(checkout: Path):
    text = (checkout / "CHANGELOG.md").read_text()
    (checkout / "CHANGELOG.md").write_text(text.replace(f"## [{__version__}]", "## [0.0.0]"))
    proc, _ = _check(checkout, f"v{__version__}")
    assert proc.returncode != 0 and "no section" in proc.stdout


def test_the_released_action_runs_the_prebuilt_image_and_both_tags_move(checkout: Path,
                                                                        tmp_path: Path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, *IDENTITY, "commit", "-q", "-m", "release candidate")
    git(checkout, "remote", "add", "origin", str(remote))
    tag = f"v{__version__}"
    git(checkout, "tag", tag)
    git(checkout, "push", "-q", "origin", "main", tag)
    tagged = git(checkout, "rev-parse", "HEAD").strip()
    git(checkout, "checkout", "-q", "--detach", tag)  # as actions/checkout leaves a tag

    image = "ghcr.io/some-owner/neuralmind-retrieval-eval"
    major = f"v{__version__.split('.')[0]}"
    proc = _bash(_script("Commit the released action.yml and move the tags"), checkout,
                 {"TAG": tag, "MAJOR": major, "IMAGE": image, "DIGEST": DIGEST,
                  "GH_TOKEN": "fake-token"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fake-token" not in proc.stdout + proc.stderr

    released = git(remote, "rev-parse", f"{tag}^{{commit}}").strip()
    assert git(remote, "rev-parse", f"{major}^{{commit}}").strip() == released
    assert git(remote, "rev-parse", f"{released}^").strip() == tagged
    assert git(remote, "rev-parse", "main").strip() == tagged  # no branch moved
    diff = git(remote, "diff", tagged, released)
    changed = [line for line in diff.splitlines()
               if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]
    # The digest of the pushed image, not a tag that can be moved after the release.
    assert changed == ["-  image: Dockerfile", f"+  image: docker://{image}@{DIGEST}"]
    released_action = yaml.safe_load(git(remote, "show", f"{released}:action.yml"))
    assert released_action["runs"] == {"using": "docker", "image": f"docker://{image}@{DIGEST}",
                                       "args": ["action"]}


def test_the_digest_comes_from_the_pushed_image():
    build = STEPS["Build and push the image"]
    commit = STEPS["Commit the released action.yml and move the tags"]
    assert build["id"] == "image" and build["with"]["push"] is True
    assert commit["env"]["DIGEST"] == "${{ steps.image.outputs.digest }}"


@pytest.mark.parametrize("digest", ["", "latest", "sha256:abc", f"sha256:{'A' * 64}",
                                    f"{'0' * 64}", f"sha256:{'0' * 64}; rm -rf /"])
def test_a_release_without_a_proper_digest_fails_before_committing(checkout: Path,
                                                                   digest: str):
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, *IDENTITY, "commit", "-q", "-m", "release candidate")
    head = git(checkout, "rev-parse", "HEAD").strip()
    proc = _bash(_script("Commit the released action.yml and move the tags"), checkout,
                 {"TAG": f"v{__version__}", "MAJOR": "v0", "IMAGE": "ghcr.io/o/r",
                  "DIGEST": digest, "GH_TOKEN": "fake-token"})
    assert proc.returncode != 0 and "digest" in proc.stdout
    assert git(checkout, "rev-parse", "HEAD").strip() == head
    assert "  image: Dockerfile\n" in (checkout / "action.yml").read_text()


def test_the_main_branch_builds_the_image_from_the_dockerfile():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["image"] == "Dockerfile"
    assert "  image: Dockerfile\n" in (ROOT / "action.yml").read_text()
