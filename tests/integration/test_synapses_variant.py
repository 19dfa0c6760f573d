"""``neuralmind:synapses=off`` (issue 23): the same index asked with NeuralMind's synapse
layer switched off, by NeuralMind's own A/B switch (``NEURALMIND_SYNAPSE_INJECT=0``)."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from evaluator.core.systems import parse_systems, systems_help
from evaluator.errors import EXIT_FLOORS, EXIT_OK
from evaluator.model import ModelSource
from evaluator.neuralmind_index import NeuralMindIndex


def test_the_variant_asks_with_the_injection_switched_off(tmp_path, monkeypatch):
    from neuralmind import project_eval

    seen = []

    class Mind:
        def query(self, question, learn):
            assert learn is False
            seen.append(os.environ.get("NEURALMIND_SYNAPSE_INJECT"))
            return SimpleNamespace(top_search_hits=[], context="", budget=None,
                                   reduction_ratio=None)

    monkeypatch.setattr(project_eval, "rank_files", lambda hits, mind: [])
    monkeypatch.setenv("NEURALMIND_SYNAPSE_INJECT", "7")  # the process's own never reaches it
    for synapses in ("on", "off"):
        index = NeuralMindIndex(tmp_path, backend="in_memory", graph_source="builtin",
                                model=ModelSource(None, "not needed"), synapses=synapses)
        index._mind = Mind()
        index.ask("where?")
    assert seen == ["1", "0"]
    assert os.environ["NEURALMIND_SYNAPSE_INJECT"] == "7"
    with pytest.raises(ValueError, match="on or off"):
        NeuralMindIndex(tmp_path, backend="in_memory", graph_source="builtin",
                        model=ModelSource(None, "not needed"), synapses="maybe")


def test_synapses_is_a_registered_variant():
    assert "neuralmind:synapses=off" in systems_help()
    assert [s.label for s in parse_systems("neuralmind,neuralmind:synapses=off")] == [
        "neuralmind", "neuralmind:synapses=off"]


def test_a_run_compares_synapses_on_and_off(cli, sample_repo, tmp_path):
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,neuralmind:synapses=off,neuralmind:synapses=on",
              "--quiet")
    doc = run.results(out)
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    first, off, on = doc["systems"]
    assert off["label"] == "neuralmind:synapses=off"
    assert len(off["queries"]) == len(first["queries"])
    # synapses=on is the evaluated index's own setting: the same answers
    assert [q["ranked_modules"] for q in on["queries"]] == \
        [q["ranked_modules"] for q in first["queries"]]
