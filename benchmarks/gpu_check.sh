#!/usr/bin/env bash
# The GPU check, on a machine with an NVIDIA GPU and CuPy installed (no network needed): the
# tests that run on "cuda" with their count, the GPU benchmark, the CPU benchmark's quick tables,
# the three examples on "cuda" for a few epochs, and last the rest of the test suite.
#
#     bash benchmarks/gpu_check.sh                  # every part, in that order
#     bash benchmarks/gpu_check.sh tests bench      # some of them: tests, bench, examples, suite
#
# PYTHON=... picks the interpreter (default: python). Everything is printed, unbuffered; the exit
# status is 1 if any part failed. Files go to a temporary folder. The parts come in the order of
# what the GPU issue asks, so that a run cut short by a time limit loses the least.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
# The checkout itself is importable: no install step (a GPU machine may have no network for pip).
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out=$(mktemp -d)
status=0
parts=" ${*:-tests bench examples suite} "

wanted() { [[ $parts == *" $1 "* ]]; }

part() {  # a header, then the command; a failure is counted and the next part still runs
    echo
    echo "=== $1 ==="
    shift
    local start=$SECONDS
    "$@" || { echo "!!! failed: $*"; status=1; }
    echo "($((SECONDS - start)) s)"
}

# Is there a GPU for tensorgrad? Without one, nothing below would run on "cuda".
part "device" "$PY" -c "
import cupy, tensorgrad as tg
print('CuPy', cupy.__version__, '| GPUs seen:', tg.cuda.device_count(), '| tg.cuda.is_available():',
      tg.cuda.is_available())
assert tg.cuda.is_available(), 'tensorgrad sees no GPU: the checks below would not run on cuda'"
[ "$status" -eq 0 ] || exit 1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true

# The tests that run on "cuda" (the figure the GPU issue asks for), with the skip reasons, and
# what their JUnit report counts. CuPy compiles each kernel on first use: the first run is slower.
# With pytest-xdist, eight processes share the GPU: 42 s on an H200 against minutes one by one
# (the rest of the suite runs one by one: some parameter ids hold a lambda's address, which
# xdist's processes would not agree on).
if wanted tests; then
    workers=$("$PY" -c "import xdist" 2>/dev/null && echo "-n 8")
    part "the tests on cuda" "$PY" -m pytest -q -rs -p no:cacheprovider $workers -k cuda --junitxml="$out/junit.xml"
    part "the tests on cuda, counted" "$PY" benchmarks/junit_count.py "$out/junit.xml"
fi

# Speed: tensorgrad on the GPU against PyTorch on the same GPU, then the CPU figures for reference.
if wanted bench; then
    part "benchmarks/gpu.py" "$PY" benchmarks/gpu.py
    part "benchmarks/tensor.py (quick: per-op and MLP tables, CPU)" \
        "$PY" benchmarks/tensor.py --quick --tables op,mlp
fi

# The examples, the same scripts as on the CPU, with --device cuda and a few epochs.
if wanted examples; then
    part "examples/digits_tensor.py on cuda" "$PY" examples/digits_tensor.py --device cuda --epochs 5 \
        --output "$out/digits_tensor.png" --weights "$out/digits_tensor.npz"
    part "examples/digits_cnn.py on cuda" "$PY" examples/digits_cnn.py --device cuda --epochs 2 \
        --no-progress --output "$out/digits_cnn.png"
    part "examples/names_mlp.py on cuda" "$PY" examples/names_mlp.py --device cuda --steps 2000 \
        --no-progress --output "$out/names_mlp.png"
    part "examples/names_gpt.py on cuda" "$PY" examples/names_gpt.py --device cuda --steps 300 \
        --no-progress --output "$out/names_gpt.png"
    part "examples/names_gpt.py on cuda, mixed precision" "$PY" examples/names_gpt.py --device cuda --amp \
        --steps 300 --no-progress --output "$out/names_gpt_amp.png"
fi

# The rest of the suite (the CPU tests, which CI runs too): what this machine's packages change.
# A package it lacks, such as graphviz, fails only its own tests.
if wanted suite; then
    part "the rest of the test suite" "$PY" -m pytest -q -rs -p no:cacheprovider -k "not cuda"
fi

echo
echo "gpu_check: $([ "$status" -eq 0 ] && echo "all parts passed" || echo "SOME PARTS FAILED") (files in $out)"
exit "$status"
