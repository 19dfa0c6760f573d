"""The run's memo of embedding vectors (evaluator/embedding_memo.py) and where the NeuralMind
adapter installs it (issue 21 item 7: a base+head run re-embeds only what the base did not)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from evaluator import embedding_memo
from evaluator.embedding_memo import EmbeddingMemo, RunMemos, run_scope, text_key
from evaluator.model import ModelSource
from evaluator.neuralmind_index import NeuralMindIndex, model_env


class Recording:
    """A deterministic fake embedder that records every call."""

    dim = 4

    def __init__(self, salt: str = "") -> None:
        self.salt = salt
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = [np.frombuffer(hashlib.sha256((self.salt + t).encode()).digest()[:16],
                              dtype=np.float32) for t in texts]
        return np.array(rows, dtype=np.float32).reshape(len(texts), self.dim)


def test_repeated_texts_are_served_without_calling_the_embedder():
    inner = Recording()
    memo = EmbeddingMemo(inner, model_key="m")
    first = memo.embed(["a", "b"])
    again = memo.embed(["b", "a", "a"])
    assert inner.calls == [["a", "b"]]
    assert np.array_equal(again, first[[1, 0, 0]])
    assert (memo.requested, memo.computed) == (5, 2)


def test_misses_are_embedded_in_one_call_each_once_and_the_order_is_kept():
    inner = Recording()
    memo = EmbeddingMemo(inner, model_key="m")
    memo.embed(["b"])
    out = memo.embed(["c", "b", "a", "c", "d"])
    assert inner.calls == [["b"], ["c", "a", "d"]]
    direct = Recording().embed(["c", "b", "a", "c", "d"])
    assert out.dtype == np.float32 and out.shape == (5, 4)
    assert np.array_equal(out, direct)
    assert memo(["a"]) == direct[[2]].tolist()  # __call__: lists of floats


def test_distinct_model_keys_never_mix():
    memos = RunMemos()
    one = memos.for_model("model-1 /m1", lambda: Recording("one"))
    two = memos.for_model("model-2 /m2", lambda: Recording("two"))
    assert memos.for_model("model-1 /m1", lambda: Recording("never made")) is one
    a, b = one.embed(["same text"]), two.embed(["same text"])
    assert not np.array_equal(a, b)
    assert len(one.inner.calls) == len(two.inner.calls) == 1  # type: ignore[attr-defined]


def test_past_the_cap_new_rows_are_returned_but_not_kept():
    inner = Recording()
    memo = EmbeddingMemo(inner, model_key="m", max_entries=2)
    memo.embed(["a", "b", "c"])
    assert len(memo) == 2
    out = memo.embed(["a", "b", "c"])  # the held rows are still served; c is embedded again
    assert inner.calls == [["a", "b", "c"], ["c"]]
    assert np.array_equal(out, Recording().embed(["a", "b", "c"]))


def test_a_wrong_shape_from_the_embedder_is_refused():
    class Short(Recording):
        def embed(self, texts: list[str]) -> np.ndarray:
            return super().embed(texts)[:1]

    with pytest.raises(ValueError, match="shape"):
        EmbeddingMemo(Short(), model_key="m").embed(["a", "b"])


def test_the_key_is_the_exact_text():
    assert text_key("a") != text_key("a ") != text_key("A")
    assert text_key("\udce9") == hashlib.sha256(b"\xed\xb3\xa9").digest()  # no crash


def test_one_memo_per_run_none_outside():
    assert embedding_memo.current() is None
    with run_scope() as first:
        assert embedding_memo.current() is first
        with run_scope() as inner:  # a section of a sharded run: the same run
            assert inner is first
    assert embedding_memo.current() is None
    with run_scope() as second:
        assert second is not first

    @embedding_memo.per_run
    def run() -> RunMemos | None:
        return embedding_memo.current()

    assert run() is not None and run() is not run()


# ------------------------------------------------------------ where the adapter uses it


def index(tmp_path: Path, backend: str = "auto", folder: Path | None = None) -> NeuralMindIndex:
    model = ModelSource(folder if folder is not None else tmp_path, "env")
    return NeuralMindIndex(tmp_path, backend=backend, graph_source="builtin", model=model)


def test_the_adapter_uses_the_memo_only_inside_a_run_with_a_model_folder(tmp_path):
    from neuralmind import turbovec_backend

    (tmp_path / "model.onnx").write_bytes(b"not a model")
    with model_env(tmp_path):
        assert index(tmp_path)._embedding_memo() is None  # no run in progress
    with run_scope() as memos:
        with model_env(tmp_path):
            assert index(tmp_path, backend="in_memory")._embedding_memo() is None
            download = NeuralMindIndex(tmp_path, backend="auto", graph_source="builtin",
                                       model=ModelSource(None, "download"))
            assert download._embedding_memo() is None
        nm = index(tmp_path)
        with nm._library():
            assert turbovec_backend._EMBED_FN_OVERRIDE is nm._memo is not None
            assert nm._memo.dim == 384
        assert turbovec_backend._EMBED_FN_OVERRIDE is None
        other = index(tmp_path)
        with other._library():
            assert other._memo is nm._memo  # one memo per model for the run
        assert len(memos._memos) == 1
    plain = index(tmp_path, backend="in_memory")
    with run_scope(), plain._library():
        assert turbovec_backend._EMBED_FN_OVERRIDE is None


@pytest.mark.model
def test_memo_rows_are_bit_identical_to_one_batch_of_the_real_model(model_dir):
    """The premise: a MiniLM row does not depend on its batch-mates or batch size."""
    from neuralmind.onnx_embedder import OnnxMiniLMEmbedder

    texts = [f"def f{i}(x):\n    " + "return x * 2  # doubled\n" * (i % 7 + 1)
             for i in range(70)] + ["short", "a docstring " * 60]
    with model_env(model_dir):
        model = OnnxMiniLMEmbedder(str(model_dir))
        whole = model.embed(texts)
        memo = EmbeddingMemo(model, model_key="k")
        memo.embed(texts[::3])  # a "base" that embedded a third of them, in other batches
        served = memo.embed(texts)
    assert memo.computed == len(texts)
    assert served.tobytes() == whole.tobytes()
