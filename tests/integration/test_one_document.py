"""One document, three places (issue 25): ``report.md``, the posted comment and
``comment --preview`` are the same rendering of the same results, byte for byte; the saved
``results.json`` alone reproduces the verdict (no ``--baseline`` needed)."""

from __future__ import annotations

import json

from tests.fake_github import PR
from tests.integration.test_verdict_cli import FAST, _env, pr_repo  # noqa: F401 (fixture)


def _markers_off(body: str) -> str:
    lines = body.splitlines(keepends=True)
    assert lines[0].startswith("<!-- neuralmind-retrieval-eval:comment-key=")
    assert lines[1].startswith("<!-- ")
    return "".join(lines[2:])


def test_report_comment_and_preview_are_one_document(pr_repo, cli, server, tmp_path):  # noqa: F811
    env = _env(tmp_path, server, pr_repo)
    out = pr_repo.parent / "out"
    config = tmp_path / "floors.yml"
    config.write_text("floors: {ndcg@5: 0.2, faithfulness: '> 0'}\nshape-floors: "
                      "{hit_rate: 0.5}\nzero-miss: false\n")
    run = cli("evaluate", str(pr_repo), *FAST, "--baseline", "ref:main", "--comment",
              "--config", str(config), "--output-dir", str(out), env=env)
    assert run.code in (0, 1), run.stderr
    report = (out / "report.md").read_text()
    # what the report holds: floors with margins and a Floor column, the PR-touched
    # section, the base ref and the comparison
    assert "tightest margins" in report and "| Floor |" in report
    assert "### Questions grading files this PR changed" in report
    assert "compared with main (" in report and "| Base | Δ |" in report
    [posted] = server.on_issue(PR)
    assert _markers_off(posted["body"]) == report

    # The results file alone: no --baseline, no GitHub context, no options file.
    saved = json.loads((out / "results.json").read_text())
    assert saved["report"]["baseline"]["run"]["ref"] == "main"
    requests_before = len(server.requests)
    preview = cli("comment", "--results", str(out / "results.json"), "--preview", env={})
    assert preview.code == run.code, preview.stderr
    assert len(server.requests) == requests_before
    assert _markers_off(preview.stdout) == report

    again = cli("comment", "--results", str(out / "results.json"), env=env)
    assert again.code == run.code, again.stderr
    [updated] = server.on_issue(PR)
    assert updated["body"] == preview.stdout
