#!/usr/bin/env bash
# Introspection figures in one command: the whole `steward schema --db URL` process (connect, read the catalog,
# gather samples, print the context) on generated schemas of 1,000 and 10,000 tables × 20 columns (each table
# with a foreign key to the one before it and three rows), on SQLite, PostgreSQL and MariaDB. Wall time and peak
# RSS from /usr/bin/time, with the CPU time (user + system) the process took, steadier than wall time on a shared
# machine; the median of --runs runs; every run starts with an empty sample cache (cold).
#
#   bench/introspect.sh                         # all engines, 1,000 and 10,000 tables, 5 runs each
#   bench/introspect.sh --engines sqlite --tables 10000 --runs 3
#   bench/introspect.sh --bin /tmp/steward-old --keep   # time another binary; keep the scratch databases
#   bench/introspect.sh --setup                 # only create the scratch databases (kept)
#
# The scratch databases (steward_bench_introspect_<N> on 127.0.0.1:5432 as postgres and 127.0.0.1:3306 as root,
# a file under target/tmp for SQLite) are created when missing and dropped at the end unless --keep.
# Default binary: target/release/steward (CARGO_TARGET_DIR respected); build it with
# `cargo build --release -p steward`.
set -euo pipefail

cd "$(dirname "$0")/.."
engines="sqlite postgres mariadb"
sizes="1000 10000"
runs=5
keep=0
setup=0
target="${CARGO_TARGET_DIR:-target}"
bin="$target/release/steward"
while [ $# -gt 0 ]; do
  case "$1" in
    --engines) engines="$2"; shift 2 ;;
    --tables) sizes="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --setup) setup=1; shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
[ "$setup" = 1 ] || [ -x "$bin" ] || { echo "no steward binary at $bin; run: cargo build --release -p steward" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time is needed (apt-get install time)" >&2; exit 1; }

pg_host=127.0.0.1 pg_port=5432 my_host=127.0.0.1 my_port=3306
scratch="$target/tmp/bench-introspect"
mkdir -p "$scratch"
psql_() { psql -X -q -v ON_ERROR_STOP=1 -h "$pg_host" -p "$pg_port" -U postgres "$@"; }
mariadb_() { mariadb -h "$my_host" -P "$my_port" -u root "$@"; }

# The generated schema in one dialect: CREATE TABLE and one INSERT of three rows per table.
generate() { # engine tables
  python3 - "$1" "$2" <<'EOF'
import sys
engine, n = sys.argv[1], int(sys.argv[2])
real = "DOUBLE PRECISION" if engine == "postgres" else ("DOUBLE" if engine == "mariadb" else "REAL")
out = sys.stdout
if engine == "sqlite":
    out.write("BEGIN;\n")
for i in range(n):
    cols = ["id INTEGER PRIMARY KEY"]
    for c in range(1, 19):
        cols.append(f"c{c} " + ("TEXT" if c % 3 == 0 else "INTEGER" if c % 3 == 1 else real))
    if i == 0:
        cols.append("parent_id INTEGER")
    elif engine == "mariadb":
        cols.append(f"parent_id INTEGER, FOREIGN KEY (parent_id) REFERENCES t{i-1}(id)")
    else:
        cols.append(f"parent_id INTEGER REFERENCES t{i-1}(id)")
    out.write(f"CREATE TABLE t{i} ({', '.join(cols)});\n")
    rows = []
    for r in range(1, 4):
        vals = [f"'value {r} of {c}'" if c % 3 == 0 else str(r * c) if c % 3 == 1 else f"{r * c}.5" for c in range(1, 19)]
        rows.append(f"({r}, {', '.join(vals)}, NULL)")
    out.write(f"INSERT INTO t{i} VALUES {', '.join(rows)};\n")
if engine == "sqlite":
    out.write("COMMIT;\n")
EOF
}

# Creates the scratch database for (engine, tables) unless it already holds them; prints its URL.
prepare() { # engine tables
  local engine=$1 n=$2 name="steward_bench_introspect_$2"
  case "$engine" in
    sqlite)
      local file="$scratch/$name.sqlite"
      if [ "$(sqlite3 "$file" "SELECT count(*) FROM sqlite_schema WHERE type='table'" 2>/dev/null || echo 0)" != "$n" ]; then
        rm -f "$file"
        generate sqlite "$n" | sqlite3 "$file"
      fi
      echo "sqlite://$file" ;;
    postgres)
      local have
      have=$(psql_ -d "$name" -Atc "SELECT count(*) FROM pg_tables WHERE schemaname='public'" 2>/dev/null || echo 0)
      if [ "$have" != "$n" ]; then
        psql_ -d postgres -c "DROP DATABASE IF EXISTS $name" -c "CREATE DATABASE $name" >/dev/null
        # One transaction per statement: 10,000 tables in one would exhaust the lock table.
        generate postgres "$n" | psql_ -d "$name" >/dev/null
        psql_ -d "$name" -c "ANALYZE" >/dev/null
      fi
      echo "postgres://postgres@$pg_host:$pg_port/$name" ;;
    mariadb)
      local have
      have=$(mariadb_ -N -e "SELECT count(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA='$name'" 2>/dev/null || echo 0)
      if [ "$have" != "$n" ]; then
        mariadb_ -e "DROP DATABASE IF EXISTS $name; CREATE DATABASE $name" >/dev/null
        generate mariadb "$n" | mariadb_ "$name"
        mariadb_ "$name" -e "ANALYZE TABLE t0" >/dev/null
      fi
      echo "mysql://root@$my_host:$my_port/$name" ;;
    *) echo "unknown engine $engine" >&2; exit 2 ;;
  esac
}

drop() { # engine tables
  local name="steward_bench_introspect_$2"
  case "$1" in
    sqlite) rm -f "$scratch/$name.sqlite" ;;
    postgres) psql_ -d postgres -c "DROP DATABASE IF EXISTS $name" >/dev/null ;;
    mariadb) mariadb_ -e "DROP DATABASE IF EXISTS $name" >/dev/null ;;
  esac
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }

if [ "$setup" = 1 ]; then
  for engine in $engines; do for n in $sizes; do prepare "$engine" "$n"; done; done
  exit 0
fi
printf '%-9s %7s %9s %9s %9s %9s %10s  (%s runs, %s)\n' engine tables "wall s" "min s" "max s" "cpu s" "peak MB" "$runs" "$bin"
for engine in $engines; do
  for n in $sizes; do
    url=$(prepare "$engine" "$n")
    walls=() rss=() cpus=()
    for _ in $(seq "$runs"); do
      cache=$(mktemp -d)
      XDG_CACHE_HOME="$cache" /usr/bin/time -f '%e %M %U %S' -o "$scratch/time" \
        "$bin" schema --db "$url" >/dev/null 2>"$scratch/stderr" \
        || { cat "$scratch/stderr" >&2; rm -rf "$cache"; exit 1; }
      rm -rf "$cache"
      read -r wall kb user sys <"$scratch/time"
      walls+=("$wall") rss+=("$kb") cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')")
    done
    w=$(printf '%s\n' "${walls[@]}" | median)
    lo=$(printf '%s\n' "${walls[@]}" | sort -g | head -1)
    hi=$(printf '%s\n' "${walls[@]}" | sort -g | tail -1)
    m=$(printf '%s\n' "${rss[@]}" | median)
    c=$(printf '%s\n' "${cpus[@]}" | median)
    printf '%-9s %7s %9s %9s %9s %9s %10.0f\n' "$engine" "$n" "$w" "$lo" "$hi" "$c" "$(awk -v k="$m" 'BEGIN{print k/1024}')"
    [ "$keep" = 1 ] || drop "$engine" "$n"
  done
done
