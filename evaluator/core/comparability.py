"""Are two evaluations comparable? The run settings that change the numbers, side by side.

A delta between a baseline and a head is only a statement about the code when both were
measured the same way. These settings change the numbers without any code change, so a
difference in any of them makes the comparison meaningless:

* ``model`` — the embedding model's content fingerprint (``run.model_fingerprint``; a path or
  a description is not compared, the same model lives in different folders on different
  machines);
* ``backend`` — NeuralMind's vector backend (``in_memory`` is a deterministic stand-in, not
  the real model);
* ``graph source`` — where the code graph comes from (built-in or graphify);
* ``NeuralMind version`` — compared on major.minor (a patch release keeps the numbers);
* ``k values``, ``gain`` (nDCG's gain function) and the relevance ``threshold``;
* ``judge`` — the faithfulness judge (``evaluator-judge 4 (terms+minilm)``, or ``… (terms)``
  for a run without the model): faithfulness from two judges is not comparable;
* ``onnxruntime version`` — it computes the embeddings (compared whole: a release may change
  its kernels), when the run used the model;
* ``NeuralMind settings`` — the ``NEURALMIND_*`` variables the evaluator pins
  (``run.neuralmind_pins``; every other one is kept away from NeuralMind).

The host class (the CPU features that change floating-point results, ``run.host_class``) is
not a refusal: the same code on another host can differ in about the fourth decimal of a
cosine. :func:`host_note` says so when the two differ.

A setting recorded on one side only (an older results file) counts as a difference: it
cannot be shown to be the same. For the judge this is certain, not just cautious: results
that record none, or ``neuralmind.ragas …``, were scored by NeuralMind's judge, which is
no longer the headline one. The ground truth is *not* a setting: the head's questions
are used on both sides and added or removed questions are listed by the comparison.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluator.core.results import RunInfo
from evaluator.errors import InputError

_VERSION = re.compile(r"^\s*v?(\d+)\.(\d+)")


@dataclass(frozen=True)
class SettingDifference:
    """One run setting that differs: its name and both values as they will be shown."""

    setting: str
    base: str
    head: str

    @property
    def message(self) -> str:
        return f"{self.setting}: baseline {self.base}, head {self.head}"


def major_minor(version: str) -> str:
    """``"4.22.1"`` → ``"4.22"``; a version that is not ``N.N…`` is kept whole."""
    match = _VERSION.match(version)
    return f"{match.group(1)}.{match.group(2)}" if match else version.strip()


def _shown(value: str | None) -> str:
    return "not recorded" if value is None or value == "" else value


def _k(values: tuple[int, ...]) -> str:
    return ", ".join(str(k) for k in sorted(set(values))) or "none"


def settings_differences(base: RunInfo, head: RunInfo) -> tuple[SettingDifference, ...]:
    """Every setting that differs between ``base`` and ``head``, in a fixed order.

    Empty when the two runs are comparable. See the module docstring for what is compared
    and why; values are rendered as text so the caller can name them in a message.
    """
    pairs: list[tuple[str, str | None, str | None]] = [
        ("model", base.model_fingerprint, head.model_fingerprint),
        ("backend", base.backend, head.backend),
        ("graph source", base.graph_source, head.graph_source),
        ("NeuralMind version", major_minor(base.neuralmind_version),
         major_minor(head.neuralmind_version)),
        ("k values", _k(base.k_values), _k(head.k_values)),
        ("gain", base.gain, head.gain),
        ("relevance threshold", str(base.threshold), str(head.threshold)),
    ]
    pairs.append(("judge", base.judge, head.judge))
    # a budget cuts the contexts that are judged (and counts their tokens alike)
    pairs.append(("token budget", base.budget, head.budget))
    pairs.append(("onnxruntime version", base.onnxruntime_version, head.onnxruntime_version))
    pairs.append(("NeuralMind settings", _pins(base), _pins(head)))
    return tuple(SettingDifference(name, _shown(b), _shown(h))
                 for name, b, h in pairs if _shown(b) != _shown(h))


def _pins(run: RunInfo) -> str | None:
    return ", ".join(f"{k}={v}" for k, v in sorted(run.neuralmind_pins.items())) or None


def host_note(base: RunInfo, head: RunInfo) -> str | None:
    """A note when the baseline was measured on another host class (or recorded none)."""
    if base.host_class == head.host_class:
        return None
    return (f"The baseline was measured on another host class ({_shown(base.host_class)}; "
            f"this run: {_shown(head.host_class)}): embeddings can differ in their last "
            "bits there, so a small move may be the host's rather than the change's.")


def mismatch_message(differences: tuple[SettingDifference, ...]) -> str:
    """One message naming each difference, for the refusal (exit 2) or the warning banner."""
    listed = "; ".join(d.message for d in differences)
    return (f"the baseline was measured with different settings, so its numbers are not "
            f"comparable with this run ({listed})")


MISMATCH_MODES = ("error", "warn")


def require_comparable(base: RunInfo, head: RunInfo, *,
                       mismatch: str = "error") -> tuple[SettingDifference, ...]:
    """The differences, after refusing them unless ``mismatch`` is ``"warn"``.

    Raises :class:`InputError` (exit 2) naming each difference when the runs are not
    comparable and ``mismatch`` is ``"error"``; with ``"warn"`` returns them for the banner.
    """
    if mismatch not in MISMATCH_MODES:
        raise InputError(f"baseline-mismatch must be one of {', '.join(MISMATCH_MODES)}, "
                         f"not {mismatch!r}")
    differences = settings_differences(base, head)
    if differences and mismatch == "error":
        raise InputError(mismatch_message(differences),
                         hint="make the baseline with the same settings, or set "
                              "`baseline-mismatch: warn` to compare anyway with a warning")
    return differences
