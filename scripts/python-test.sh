#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment and runs
# its tests: pytest python/tests, then mypy --strict on python/examples.
#
#   scripts/python-test.sh              build with maturin (pip install ./python), test
#   scripts/python-test.sh --deps-only  only make the venv and install the test tools
#   scripts/python-test.sh --prebuilt   test the extension the workspace build made
#
# The venv is target/python-venv ($PYTHON_VENV to change it).
#
# --prebuilt (what .ci/run uses): `cargo build --workspace --lib --tests
# --profile test` links the extension from exactly what `cargo test --workspace`
# compiled (maturin builds the one package, whose dependencies then get
# other features and compile again: 2.5 of CI's minutes), and the package
# is put where maturin's wheel puts it (site-packages/chunk_worker/, the
# extension as _native.abi3.so). The maturin build itself (pyproject.toml)
# is what the default mode and a user's `pip install ./python` run.
#
# The extension is compiled with cargo's dev profile (MATURIN_PEP517_ARGS),
# so it reuses what `cargo test --workspace` already compiled; a user's
# `pip install ./python` builds the release profile. The test tools and
# the frameworks (LangChain, LlamaIndex) are pinned in
# python/requirements-test.txt. Under CI=true, a test whose prerequisite is
# missing (the CLI binary, the model) fails instead of skipping, and pytest
# collecting no test at all (exit 5) is a failure.
set -euo pipefail
mode="${1:-}"
case "$mode" in
  ""|--deps-only|--prebuilt) ;;
  *) echo "usage: scripts/python-test.sh [--deps-only | --prebuilt]" >&2; exit 2 ;;
esac
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [[ $mode == --prebuilt ]]; then
  # Before the venv comes first in PATH: PyO3's build script looks for
  # python3 there, and another interpreter than the test build's would
  # compile PyO3 and the extension again.
  echo "python-test: linking the extension from the workspace build (cargo build --workspace --lib --tests --profile test)"
  cargo build --workspace --lib --tests --locked --quiet --profile test
fi
venv="${PYTHON_VENV:-$root/target/python-venv}"
python="$(command -v python3 || command -v python)" || { echo "python-test: python3 is needed" >&2; exit 1; }

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
# maturin, installed in the venv, is run by name.
export PATH="$venv/bin:$PATH"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r python/requirements-test.txt
if [[ $mode == --deps-only ]]; then
  echo "python-test: the test tools are in $venv"; exit 0
fi
if [[ $mode == --prebuilt ]]; then
  echo "python-test: installing the extension of the workspace build into $venv"
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  rm -rf "$site/chunk_worker" "$site"/chunk_worker-*.dist-info
  cp -r python/chunk_worker "$site/chunk_worker"
  cp target/debug/lib_native.so "$site/chunk_worker/_native.abi3.so"
else
  echo "python-test: building the package (cargo dev profile) into $venv"
  MATURIN_PEP517_ARGS="--profile dev" "${pip[@]}" install --no-build-isolation --force-reinstall --no-deps ./python
fi

# The installed package, not the source folder, is what the tests import.
cd "$root"
set +e
"$venv/bin/python" -m pytest python/tests -q -p no:cacheprovider
rc=$?
set -e
if [[ $rc -eq 5 ]]; then
  echo "python-test: pytest collected no tests" >&2; exit 1
elif [[ $rc -ne 0 ]]; then
  exit "$rc"
fi
echo "python-test: mypy --strict python/examples"
"$venv/bin/mypy" --strict --no-incremental python/examples
