#!/usr/bin/env bash
# Steward side by side with LangChain on the same workloads (issue 12, item 6); see bench/langchain/README.md.
#
#   bash bench/langchain/run.sh                 # everything: introspection (SQLite, PostgreSQL, MariaDB) and the agent
#   bash bench/langchain/run.sh --only agent    # or --only introspect; --runs N, --steps N, --no-postgres, --no-mariadb, ...
#
# STEWARD_BIN: the steward binary (default target/release/steward under CARGO_TARGET_DIR or the repo; built
# with `cargo build --release -p steward` when missing). The LangChain side is installed from PyPI into
# target/bench-venv (pinned in requirements.txt; reused when present). Needs python3 (3.10+), /usr/bin/time,
# for PostgreSQL psql and a server at 127.0.0.1:5432 (user postgres, trust), for MariaDB the mariadb client and a
# server at 127.0.0.1:3306 (root, empty password); without a server it says SKIPPED.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$repo/target}"
venv="$target/bench-venv"
work="$target/bench-langchain"

for arg in "$@"; do
    if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then
        sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        echo
        python3 "$here/bench.py" --help | sed -n '/^options:/,$p' \
            | grep -vE -- '--(steward|python|work|chinook)( |$)'
        exit 0
    fi
done

if [[ ! -x /usr/bin/time ]]; then
    echo "needs /usr/bin/time (Debian: apt-get install time)" >&2
    exit 2
fi

steward="${STEWARD_BIN:-$target/release/steward}"
if [[ ! -x "$steward" ]]; then
    echo "== building $steward (cargo build --release -p steward; takes minutes)" >&2
    (cd "$repo" && CARGO_TARGET_DIR="$target" cargo build --release -p steward) >&2
fi

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt"; then
    echo "== installing LangChain into $venv (pinned in bench/langchain/requirements.txt)" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
    cp "$here/requirements.txt" "$venv/requirements.txt"
fi

echo "== steward: $steward ($("$steward" --version 2>/dev/null || echo '?'))"
echo "== langchain: $("$venv/bin/python" -m pip freeze --disable-pip-version-check 2>/dev/null \
    | grep -iE '^(langchain|langchain-community|langchain-openai|langchain-core|langgraph|sqlalchemy|openai)==' \
    | tr '\n' ' ')"
echo "== python: $("$venv/bin/python" --version)"
exec python3 "$here/bench.py" --steward "$steward" --python "$venv/bin/python" --work "$work" \
    --chinook "$repo/testdata/chinook/Chinook_Sqlite.sqlite" "$@"
