#!/usr/bin/env bash
# The GPU check, in one call, on a machine with an NVIDIA GPU and CuPy installed (no network
# needed): the whole test suite with a count of the tests that ran on "cuda", the GPU benchmark,
# the CPU benchmark's quick tables, and the three examples on "cuda" for a few epochs.
#
#     bash benchmarks/gpu_check.sh            # PYTHON=... picks the interpreter (default: python)
#
# Everything is printed; the exit status is 1 if any part failed. Files go to a temporary folder.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
# The checkout itself is importable: no install step (a GPU machine may have no network for pip).
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
out=$(mktemp -d)
status=0

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

# The tests that run on "cuda" first (the figure the GPU issue asks for), then the whole suite once
# (skip reasons listed; a package this machine lacks, such as graphviz, fails only its own tests),
# and what the whole suite's JUnit report says about the "cuda" tests.
part "the tests on cuda" "$PY" -m pytest -q -rs -p no:cacheprovider -k cuda
part "the test suite" "$PY" -m pytest -q -rs -p no:cacheprovider --junitxml="$out/junit.xml"
part "tests on cuda" "$PY" - "$out/junit.xml" <<'EOF'
import collections, sys, xml.etree.ElementTree as ET
counts = collections.Counter()
for case in ET.parse(sys.argv[1]).iter("testcase"):
    if "cuda" in case.get("name", ""):
        outcome = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")), "passed")
        counts[outcome] += 1
        if outcome in ("failure", "error"):
            print(f"  {outcome}: {case.get('classname')}::{case.get('name')}")
print(f"tests with 'cuda' in their id: {sum(counts.values())}: " + ", ".join(f"{n} {k}" for k, n in counts.items()))
sys.exit(1 if counts["failure"] or counts["error"] or not counts["passed"] else 0)
EOF

# Speed: tensorgrad on the GPU against PyTorch on the same GPU, then the CPU figures for reference.
part "benchmarks/gpu.py" "$PY" benchmarks/gpu.py
part "benchmarks/tensor.py (quick: per-op and MLP tables, CPU)" \
    "$PY" benchmarks/tensor.py --quick --tables op,mlp

# The examples, the same scripts as on the CPU, with --device cuda and a few epochs.
part "examples/digits_tensor.py on cuda" "$PY" examples/digits_tensor.py --device cuda --epochs 5 \
    --output "$out/digits_tensor.png" --weights "$out/digits_tensor.npz"
part "examples/digits_cnn.py on cuda" "$PY" examples/digits_cnn.py --device cuda --epochs 2 --no-progress \
    --output "$out/digits_cnn.png"
part "examples/names_mlp.py on cuda" "$PY" examples/names_mlp.py --device cuda --steps 2000 --no-progress \
    --output "$out/names_mlp.png"

echo
echo "gpu_check: $([ "$status" -eq 0 ] && echo "all parts passed" || echo "SOME PARTS FAILED") (files in $out)"
exit "$status"
