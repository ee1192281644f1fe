# Attention Lab in a container: one non-root process serving the lab on port 5006.
#   docker build -t attention-lab .                      # NumPy engine only
#   docker build -t attention-lab --build-arg WITH_TORCH=1 .   # adds the CPU build of torch
#   docker run -p 5006:5006 attention-lab                # then open http://localhost:5006/app
# Behind a proxy or on another host name, allow that origin for the websocket:
#   docker run -p 8080:5006 -e ATTENTION_LAB_ALLOWED_ORIGINS=lab.example.org attention-lab

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY app ./app
COPY assets ./assets
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ARG WITH_TORCH=0
# torch from PyTorch's CPU index: the default PyPI wheel bundles CUDA (several GB). It stays out
# of the hashed runtime lock: PyPI's torch 2.13.0 is that CUDA build, with other hashes, and the
# CPU index's files are not on PyPI (requirements/torch-cpu.txt, docs/dependencies.md).
ARG TORCH_VERSION=2.13.0
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    ATTENTION_LAB_PORT=5006 \
    ATTENTION_LAB_ALLOWED_ORIGINS=localhost:5006 \
    ATTENTION_LAB_SHOW=0

COPY --from=build /wheels /wheels
# Every dependency from the hashed lock (requirements/lock.sh makes it), then the lab's own wheel
# without resolving anything more: what runs is exactly what was locked.
COPY requirements/runtime.lock /tmp/runtime.lock
RUN pip install --no-cache-dir --require-hashes -r /tmp/runtime.lock \
    && if [ "$WITH_TORCH" = "1" ]; then \
        pip install --no-cache-dir --index-url "$TORCH_INDEX" "torch==$TORCH_VERSION"; \
    fi \
    && pip install --no-cache-dir --no-deps /wheels/*.whl \
    && rm -rf /wheels /tmp/runtime.lock \
    && useradd --create-home --uid 10001 --user-group --shell /usr/sbin/nologin lab

# Numeric, so Kubernetes runAsNonRoot can verify it.
USER 10001:10001
WORKDIR /home/lab
EXPOSE 5006

# Slim images have no curl: ask the liveness endpoint with the standard library.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('ATTENTION_LAB_PORT', '5006'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/liveness', timeout=4).status == 200 else 1)"]

# Exec form: signals reach the server directly. It expands no variables, so the CLI reads
# ATTENTION_LAB_* from the environment itself.
CMD ["attention-lab", "--address", "0.0.0.0", "--no-show"]
