"""The Docker image: what it adds to python:3.11-slim, layer by layer, and how fast it starts.

    python benchmarks/bench_image.py [--tag neuralmind-retrieval-eval:bench] [--no-build]
                                     [--runs 5] [--base python:3.11-slim]

Builds the image from the repository root (unless ``--no-build``), then prints:

* every layer of the image (``docker history``): its size and the instruction that made it,
  marking which layers come from the base image (matched by layer digest);
* the sum of the layers of our own against the goal (at most 420 MB on top of the base);
* the wall time of ``docker run --rm IMAGE --version``: one warm-up, then the median and the
  range of ``--runs`` runs, against the goal (at most 1 s);
* the labels (version, revision, source).

Figures are printed, never asserted (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MB = 420
GOAL_START_S = 1.0
MB = 1_000_000


def docker(*args: str, capture: bool = True) -> str:
    proc = subprocess.run(["docker", *args], capture_output=capture, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"docker {' '.join(args[:2])} failed:\n{proc.stderr if capture else ''}")
    return proc.stdout if capture else ""


def layer_digests(image: str) -> list[str]:
    return list(json.loads(docker("image", "inspect", image))[0]["RootFS"]["Layers"])


def history(image: str) -> list[tuple[int, str]]:
    """(size in bytes, instruction) per history entry, oldest first."""
    out = docker("history", "--no-trunc", "--human=false", "--format",
                 "{{.Size}}\t{{.CreatedBy}}", image)
    rows = []
    for line in reversed(out.strip().splitlines()):
        size, _, created = line.partition("\t")
        rows.append((int(size), " ".join(created.split())))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tag", default="neuralmind-retrieval-eval:bench")
    parser.add_argument("--base", default="python:3.11-slim")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-build", action="store_true", help="measure an existing --tag")
    args = parser.parse_args(argv)

    if not args.no_build:
        started = time.monotonic()
        subprocess.run(["docker", "build", "-q", "-t", args.tag, str(ROOT)], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"docker build: {time.monotonic() - started:.1f} s (with the layer cache)")

    # The base image's layers and history are a prefix of ours: the rest is our own.
    base_layers = layer_digests(args.base)
    if layer_digests(args.tag)[:len(base_layers)] != base_layers:
        sys.exit(f"{args.tag} is not built on the local {args.base}")
    base_entries = history(args.base)
    entries = history(args.tag)
    base_total = sum(size for size, _ in base_entries)
    own = entries[len(base_entries):]

    print(f"\nlayers of {args.tag} on top of {args.base} "
          f"(base: {base_total / MB:.0f} MB in {len(base_layers)} layer(s)):")
    print(f"{'size MB':>9}  instruction")
    for size, created in own:
        text = created.removeprefix("/bin/sh -c ").removeprefix("#(nop) ")
        print(f"{size / MB:9.1f}  {text[:110]}")
    own_total = sum(size for size, _ in own)
    verdict = "meets" if own_total / MB <= GOAL_MB else "MISSES"
    print(f"{own_total / MB:9.1f}  total of our layers ({verdict} the goal of ≤ {GOAL_MB} MB)")
    image_total = json.loads(docker("image", "inspect", args.tag))[0]["Size"]
    print(f"{image_total / MB:9.1f}  whole image, base included")

    docker("run", "--rm", args.tag, "--version")  # warm-up: the first run loads the layers
    times, printed = [], ""
    for _ in range(args.runs):
        started = time.monotonic()
        printed = docker("run", "--rm", args.tag, "--version").strip()
        times.append(time.monotonic() - started)
    median = statistics.median(times)
    verdict = "meets" if median <= GOAL_START_S else "MISSES"
    print(f"\ndocker run --rm {args.tag} --version → {printed!r}")
    print(f"  median {median:.2f} s over {args.runs} runs (min {min(times):.2f}, "
          f"max {max(times):.2f}); {verdict} the goal of ≤ {GOAL_START_S:.0f} s")

    labels = json.loads(docker("image", "inspect", args.tag))[0]["Config"]["Labels"] or {}
    print("\nlabels:")
    for key in sorted(labels):
        print(f"  {key}={labels[key]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
