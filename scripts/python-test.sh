#!/usr/bin/env bash
# Builds the Python package (python/) into a virtual environment and runs
# its tests: pytest python/tests, then mypy --strict on python/examples.
#
#   scripts/python-test.sh            venv in target/python-venv
#
# The extension is compiled with cargo's dev profile (MATURIN_PEP517_ARGS),
# so it reuses what `cargo test --workspace` already compiled; a user's
# `pip install ./python` builds the release profile. The test tools and
# the frameworks (LangChain, LlamaIndex) are pinned in
# python/requirements-test.txt. Under CI=true, a test whose prerequisite is
# missing (the CLI binary, the model) fails instead of skipping, and pytest
# collecting no test at all (exit 5) is a failure.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
venv="${PYTHON_VENV:-$root/target/python-venv}"
python="$(command -v python3 || command -v python)" || { echo "python-test: python3 is needed" >&2; exit 1; }

if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
# maturin, installed in the venv, is run by name.
export PATH="$venv/bin:$PATH"
pip=("$venv/bin/python" -m pip --disable-pip-version-check -q)
"${pip[@]}" install -r python/requirements-test.txt
echo "python-test: building the package (cargo dev profile) into $venv"
MATURIN_PEP517_ARGS="--profile dev" "${pip[@]}" install --no-build-isolation --force-reinstall --no-deps ./python

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
