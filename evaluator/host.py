"""The host class: the machine architecture and the CPU features that change floating-point
results (the kernels onnxruntime picks, so the embeddings' last bits and cosine values in
about the fourth decimal). Recorded in the results; a baseline from another host class gets
a note (:func:`evaluator.core.comparability.host_note`), not a refusal.

The only module that reads ``/proc/cpuinfo``.
"""

from __future__ import annotations

import platform
from pathlib import Path

# The features whose presence changes which kernels run (x86: AVX-512, AVX2, FMA, AVX,
# VNNI; ARM: Advanced SIMD, SVE, the dot-product instructions).
FP_FEATURES = ("avx512f", "avx512_vnni", "avx2", "fma", "avx", "asimd", "sve", "asimddp")


def host_class(cpuinfo: Path = Path("/proc/cpuinfo"), machine: str | None = None) -> str:
    """``"x86_64 (avx512f avx2 fma avx)"``: the architecture and the listed features it
    has; ``"… (features unknown)"`` where the CPU's flags cannot be read."""
    arch = (machine if machine is not None else platform.machine()) or "unknown"
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return f"{arch} (features unknown)"
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() in ("flags", "features"):
            flags = set(value.split())
            break
    else:
        return f"{arch} (features unknown)"
    present = [f for f in FP_FEATURES if f in flags]
    return f"{arch} ({' '.join(present) or 'none of ' + ', '.join(FP_FEATURES)})"
