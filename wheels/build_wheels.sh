#!/usr/bin/env bash
# Build and test the manylinux wheels of softfp8 for CPython 3.11, 3.12 and 3.13: one
# run of wheels/build_wheel.sh per interpreter (build, auditwheel repair, install into a
# fresh venv -- NumPy 2.4 on 3.11, NumPy 2.5 on 3.12 and 3.13, as PyPI serves them -- and
# the test suite against the installed wheel).
#
#   wheels/build_wheels.sh                 # every version below
#   VERSIONS="3.13" wheels/build_wheels.sh # some of them
#
# Interpreters: $PYTHON_3_11 / $PYTHON_3_12 / $PYTHON_3_13 when set, else python3.X if it
# runs, else pyenv's newest 3.X.  The other variables of build_wheel.sh (PYTEST_ARGS,
# SOFTFP8_VECTORS, KEEP_WORK) apply to every run.  Exits non-zero at the first version
# that fails or has no interpreter.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
read -r -a versions <<<"${VERSIONS:-3.11 3.12 3.13}"

find_python() {
    local v="$1" var="PYTHON_${1/./_}"
    if [ -n "${!var:-}" ]; then echo "${!var}"; return; fi
    if "python$v" -c '' >/dev/null 2>&1; then command -v "python$v"; return; fi
    ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v" 2>/dev/null | sort -V | tail -n 1
}

start=$SECONDS
built=()
for v in "${versions[@]}"; do
    py="$(find_python "$v")"
    [ -n "$py" ] || { echo "build_wheels: no Python $v (set PYTHON_${v/./_})" >&2; exit 1; }
    echo "== build_wheels: CPython $v ($py)"
    PYTHON="$py" "$HERE/build_wheel.sh"
    built+=("cp${v/./}")
done
echo
echo "build_wheels: OK in $((SECONDS - start))s: ${built[*]} in $HERE/wheelhouse"
