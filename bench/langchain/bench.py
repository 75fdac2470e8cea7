#!/usr/bin/env python3
"""Drives the side-by-side benchmark (called by run.sh): Steward against LangChain on the same workloads.

Workload 1, introspection of a generated schema (1,000 tables x 20 columns, a foreign key each, 3 rows each)
on SQLite, PostgreSQL and MariaDB, whole process (wall time around the child, peak RSS from /usr/bin/time):
  Steward   `steward schema --db URL --budget 1000000` with an empty catalog cache (then again with the cache
            warm, as a second run would find it)
  LangChain `SQLDatabase.from_uri(URL)` + `db.get_table_info()` (lc_introspect.py)
Workload 2, the SQL agent on Chinook against mock_openai.py (answers at once, same script for both): N tool
calls (list tables, describe Artist+Album, then queries), then the final answer, i.e. N+1 model calls:
  Steward   `steward ask --agent analyst --model openai:mock --db sqlite://Chinook` (OPENAI_BASE_URL = mock)
  LangChain `create_agent` (langchain 1.x) and `create_sql_agent` (langchain_community) with ChatOpenAI
The mock's log is checked after every run: N+1 requests from that client, the steps in order, each tool's
result sent back in the next request, no error.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
LEGEND = """What each side computes:
- introspect: Steward `steward schema --db URL --budget 1000000` (catalog with keys, foreign keys, row estimates,
  up to 5 distinct sample values per text column; the whole schema context rendered to stdout). 'cache cold' =
  empty XDG_CACHE_HOME, 'cache warm' = the catalog cache the cold run wrote. LangChain `SQLDatabase.from_uri` +
  `get_table_info()` (SQLAlchemy reflection of every table, CREATE TABLE text, 3 sample rows per table).
- agent: the same scripted tool calls (list tables, describe Artist+Album, SQL queries) and final answer from
  the local mock model, answered at once; Steward `steward ask --agent analyst`, LangChain `create_agent`
  (langchain 1.x) or `create_sql_agent(agent_type="tool-calling")` with ChatOpenAI and SQLDatabaseToolkit.
  'per model call' = run time / model calls. 'in one process': LangChain's agent built once and invoked
  repeatedly, Steward's `steward eval --concurrency 1` latency per question (ms steps); 'one more step' = the
  extra time of one more tool call and model call, from two step counts.
Ratio = LangChain / Steward (above 1: Steward is faster or smaller)."""
QUESTION = "Which artists have the most albums, which countries spend the most, and which genres have most tracks?"


def timed(cmd, env=None, cwd=None, stdout_path=None, ok=(0,)):
    """Runs cmd under /usr/bin/time; returns (wall s, peak RSS MB, stdout text); exits unless its code is in ok."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        full = ["/usr/bin/time", "-o", tf.name, "-f", "%M"] + [str(c) for c in cmd]
        out = open(stdout_path, "w") if stdout_path else subprocess.PIPE
        started = time.perf_counter()
        try:
            p = subprocess.run(full, env=env, cwd=cwd, stdout=out, stderr=subprocess.PIPE, text=True, timeout=600)
        finally:
            wall = time.perf_counter() - started
            if stdout_path:
                out.close()
        if p.returncode not in ok:
            raise SystemExit(f"FAILED ({p.returncode}): {' '.join(map(str, cmd))}\n{p.stderr[-3000:]}")
        # Wall time from here (/usr/bin/time's %e has 10 ms steps); peak RSS (%M, KiB) from /usr/bin/time.
        rss = tf.read().split()[-1]
        text = Path(stdout_path).read_text() if stdout_path else p.stdout
        return wall, int(rss) / 1024, text


def median(xs):
    return statistics.median(xs)


def fmt_s(x):
    if x < 0.1:
        return f"{x * 1000:.1f} ms"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


class Table:
    def __init__(self):
        self.rows = []

    def add(self, workload, metric, steward, langchain, unit):
        self.rows.append((workload, metric, steward, langchain, unit))

    def print(self):
        head = ("workload", "measure", "Steward", "LangChain", "LangChain / Steward")
        lines = []
        for w, m, s, l, unit in self.rows:
            if unit == "s":
                sv, lv = fmt_s(s), fmt_s(l)
            else:
                sv, lv = f"{s:.0f} {unit}", f"{l:.0f} {unit}"
            lines.append((w, m, sv, lv, f"{l / s:.1f}x" if s else "-"))
        widths = [max(len(r[i]) for r in lines + [head]) for i in range(5)]
        sep = "+-" + "-+-".join("-" * w for w in widths) + "-+"
        print(sep)
        print("| " + " | ".join(h.ljust(w) for h, w in zip(head, widths)) + " |")
        print(sep)
        for r in lines:
            print("| " + " | ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) + " |")
        print(sep)


# ---------------------------------------------------------------------------------------------- introspection


def make_sqlite(path, tables):
    if path.exists():
        return
    import sqlite3

    tmp = path.with_suffix(".tmp")
    tmp.unlink(missing_ok=True)
    sql = subprocess.run([sys.executable, HERE / "gen_schema.py", "sqlite", str(tables)], capture_output=True,
                         text=True, check=True).stdout
    con = sqlite3.connect(tmp)
    con.executescript(sql)
    con.close()
    tmp.rename(path)


def make_postgres(name, tables):
    """Creates the scratch database; returns False (and says why) when PostgreSQL does not answer."""
    base = ["psql", "-h", "127.0.0.1", "-p", "5432", "-U", "postgres", "-v", "ON_ERROR_STOP=1", "-q"]
    try:
        subprocess.run(base + ["-d", "postgres", "-c", f"DROP DATABASE IF EXISTS {name}", "-c",
                               f"CREATE DATABASE {name}"], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"SKIPPED postgres: {e}", flush=True)
        return False
    sql = subprocess.run([sys.executable, HERE / "gen_schema.py", "postgres", str(tables)], capture_output=True,
                         text=True, check=True).stdout
    subprocess.run(base + ["-d", name], input=sql, text=True, check=True, capture_output=True)
    subprocess.run(base + ["-d", name, "-c", "ANALYZE"], check=True, capture_output=True)
    return True


def make_mysql(name, tables):
    """Creates the scratch database on MariaDB/MySQL; returns False (and says why) when it does not answer."""
    base = ["mariadb", "-h", "127.0.0.1", "-P", "3306", "-u", "root"]
    try:
        subprocess.run(base + ["-e", f"DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"], check=True,
                       capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        print(f"SKIPPED mariadb: {e}", flush=True)
        return False
    sql = subprocess.run([sys.executable, HERE / "gen_schema.py", "mysql", str(tables)], capture_output=True,
                         text=True, check=True).stdout
    subprocess.run(base + [name], input=sql, text=True, check=True, capture_output=True)
    subprocess.run(base + [name, "-e", "ANALYZE TABLE " + ", ".join(f"t{i}" for i in range(tables))],
                   check=True, capture_output=True)
    return True


def drop_mysql(name):
    subprocess.run(["mariadb", "-h", "127.0.0.1", "-u", "root", "-e", f"DROP DATABASE IF EXISTS {name}"],
                   capture_output=True)


def drop_postgres(name):
    subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-q", "-c",
                    f"DROP DATABASE IF EXISTS {name}"], capture_output=True)


def introspection(args, table, work):
    targets = []
    sqlite_path = work / f"schema-{args.tables}.sqlite"
    make_sqlite(sqlite_path, args.tables)
    targets.append(("SQLite", f"sqlite://{sqlite_path}", f"sqlite:///{sqlite_path}"))
    pg_name = f"steward_lc_bench_{os.getpid()}"
    if not args.no_postgres and make_postgres(pg_name, args.tables):
        targets.append(("PostgreSQL", f"postgres://postgres@127.0.0.1:5432/{pg_name}",
                        f"postgresql+psycopg2://postgres@127.0.0.1:5432/{pg_name}"))
    my_name = f"steward_lc_bench_{os.getpid()}"
    if not args.no_mariadb and make_mysql(my_name, args.tables):
        targets.append(("MariaDB", f"mysql://root@127.0.0.1:3306/{my_name}",
                        f"mysql+pymysql://root@127.0.0.1:3306/{my_name}"))
    try:
        for engine, s_url, l_url in targets:
            label = f"introspect {args.tables} tables, {engine}"
            lc_cmd = [args.python, "-W", "ignore", HERE / "lc_introspect.py", l_url]
            wall, _, probe = timed(lc_cmd, ok=(0, 3))
            if "RecursionError" in probe:
                print(f"[{engine}] LangChain with Python's defaults FAILS: SQLDatabase.from_uri raised RecursionError "
                      f"after {wall:.2f} s (SQLAlchemy reflects the foreign-key chain recursively); the timed runs "
                      f"below use --deep (recursion limit 100,000 in a thread with a 512 MiB stack)", flush=True)
                lc_cmd.append("--deep")
                label += " (LangChain: --deep)"
            cold, warm, lc = [], [], []
            for _ in range(args.runs):
                cache = Path(tempfile.mkdtemp(prefix="steward-cache-", dir=work))
                env = dict(os.environ, XDG_CACHE_HOME=str(cache))
                cmd = [args.steward, "schema", "--db", s_url, "--budget", "1000000"]
                cold.append(timed(cmd, env=env, stdout_path=work / "steward-schema.txt")[:2])
                warm.append(timed(cmd, env=env, stdout_path=work / "steward-schema.txt")[:2])
                shutil.rmtree(cache, ignore_errors=True)
                wall, rss, lc_text = timed(lc_cmd)
                lc.append((wall, rss))
            s_text = (work / "steward-schema.txt").read_text()
            print(f"[{engine}] Steward schema text: {len(s_text.encode())} bytes, "
                  f"{s_text.count('CREATE TABLE')} CREATE TABLE; LangChain: {lc_text.strip()}", flush=True)
            for name, xs in (("Steward cold cache", cold), ("Steward warm cache", warm), ("LangChain", lc)):
                print(f"[{engine}] {name}: wall {[round(w, 4) for w, _ in xs]} s, peak RSS "
                      f"{[round(m) for _, m in xs]} MB", flush=True)
            table.add(label, "wall, median (cache cold)", median([w for w, _ in cold]), median([w for w, _ in lc]), "s")
            table.add(label, "peak RSS, median (cache cold)", median([m for _, m in cold]),
                      median([m for _, m in lc]), "MB")
            table.add(label, "wall, median (Steward's cache warm)", median([w for w, _ in warm]),
                      median([w for w, _ in lc]), "s")
    finally:
        engines = [t[0] for t in targets]
        if "PostgreSQL" in engines:
            drop_postgres(pg_name)
        if "MariaDB" in engines:
            drop_mysql(my_name)


# ---------------------------------------------------------------------------------------------------- agent


class Mock:
    def __init__(self, work):
        self.proc = subprocess.Popen([sys.executable, HERE / "mock_openai.py", "--port", "0"],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline())
        self.base = f"http://127.0.0.1:{self.port}"

    def reset(self, steps):
        urllib.request.urlopen(urllib.request.Request(f"{self.base}/_reset?steps={steps}", method="POST")).read()

    def log(self):
        return json.loads(urllib.request.urlopen(f"{self.base}/_log").read())

    def check(self, client, steps, runs, answer_text=None):
        """Checks that `runs` runs of `steps` tool calls each went through; returns the log."""
        log = self.log()
        bad = [e for e in log if e["error"] or e["client"] != client]
        expected = list(range(steps + 1)) * runs
        got = [e["step"] for e in log]
        if bad or got != expected:
            raise SystemExit(f"mock log check failed for {client}: steps {got} (want {expected}); bad: {bad[:3]}")
        if answer_text is not None and "Iron Maiden has the most albums (21)" not in answer_text:
            raise SystemExit(f"{client} did not print the mock's final answer: {answer_text[-500:]}")
        return log

    def close(self):
        self.proc.terminate()
        self.proc.wait()


def agent(args, table, work):
    chinook = Path(args.chinook).resolve()
    mock = Mock(work)
    home = work / "home"
    home.mkdir(exist_ok=True)
    s_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "AZURE_", "STEWARD_", "OLLAMA_"))}
    s_env.update(HOME=str(home), XDG_CACHE_HOME=str(home / "cache"), XDG_DATA_HOME=str(home / "data"),
                 XDG_CONFIG_HOME=str(home / "config"), OPENAI_BASE_URL=f"{mock.base}/v1", OPENAI_API_KEY="test",
                 NO_COLOR="1")
    steward = [args.steward, "ask", "--db", f"sqlite://{chinook}", "--agent", "analyst", "--model", "openai:mock",
               "--max-steps", "1000"]
    lc = {f: [args.python, "-W", "ignore", HERE / "lc_agent.py", f, f"sqlite:///{chinook}", f"{mock.base}/v1"]
          for f in ("create_agent", "create_sql_agent")}
    try:
        results = {}
        for steps in (args.steps, args.steps_long):
            for side, cmd, extra in [("steward", steward + [QUESTION], []),
                                     ("steward --no-store", steward + ["--no-store", QUESTION], []),
                                     ("create_agent", lc["create_agent"], []),
                                     ("create_sql_agent", lc["create_sql_agent"], [])]:
                client = "steward" if side.startswith("steward") else "langchain"
                xs = []
                for _ in range(args.runs):
                    mock.reset(steps)
                    wall, rss, out = timed(cmd, env=s_env if client == "steward" else None, cwd=home)
                    mock.check(client, steps, 1, out)
                    xs.append((wall, rss))
                results[(side, steps)] = xs
                print(f"[agent {steps} tool calls] {side}: wall {[round(w, 4) for w, _ in xs]} s, peak RSS "
                      f"{[round(m) for _, m in xs]} MB (mock log checked: {steps + 1} requests per run, each tool "
                      f"result sent back)", flush=True)
        n, m = args.steps, args.steps_long
        med = {k: median([w for w, _ in v]) for k, v in results.items()}
        rss = {k: median([r for _, r in v]) for k, v in results.items()}
        for steps in (n, m):
            label = f"agent on Chinook, {steps} tool calls + answer"
            for lc_side in ("create_agent", "create_sql_agent"):
                table.add(label, f"whole process, median ({lc_side})", med[("steward", steps)],
                          med[(lc_side, steps)], "s")
                if steps == n:
                    table.add(label, f"per model call, whole process ({lc_side})", med[("steward", n)] / (n + 1),
                              med[(lc_side, n)] / (n + 1), "s")
                    table.add(label, f"peak RSS ({lc_side})", rss[("steward", n)], rss[(lc_side, n)], "MB")
            if steps == n:
                table.add(label, "whole process, Steward --no-store vs create_agent", med[("steward --no-store", n)],
                          med[("create_agent", n)], "s")
        startup(args, table)
        in_process(args, table, work, mock, chinook, s_env, home)
    finally:
        mock.close()


def startup(args, table):
    """What start-up alone costs: `steward --version` against importing what lc_agent.py imports."""
    imports = ("import langchain_community.agent_toolkits, langchain_community.utilities, langchain_openai, "
               "langchain.agents")
    s = [timed([args.steward, "--version"])[0] for _ in range(args.runs)]
    lc = [timed([args.python, "-W", "ignore", "-c", imports])[0] for _ in range(args.runs)]
    print(f"[start-up] steward --version {[round(x, 4) for x in s]} s; python -c '{imports}' "
          f"{[round(x, 3) for x in lc]} s", flush=True)
    table.add("start-up only", "steward --version / python imports", median(s), median(lc), "s")


def in_process(args, table, work, mock, chinook, s_env, home):
    """Per run inside one long-lived process: LangChain builds its agent once and runs the question R times;
    Steward's `steward eval` runs R copies of the question in one process (latency per question, concurrency 1).
    At two step counts, so that the difference gives the cost of one more step (tool call + model call)."""
    r = args.repeat
    per_run = {}
    for n in (args.steps, args.steps_long):
        mock.reset(n)
        out = subprocess.run([args.python, "-W", "ignore", HERE / "lc_agent.py", "create_agent",
                              f"sqlite:///{chinook}", f"{mock.base}/v1", str(r)],
                             capture_output=True, text=True, check=True).stdout
        mock.check("langchain", n, r)
        lc_runs = json.loads(out.strip().splitlines()[-1])["runs_s"]
        dataset = work / "repeat.yaml"
        qs = "\n".join(f"  - id: q{i}\n    question: \"{QUESTION}\"\n    sql: SELECT 1\n" for i in range(r))
        dataset.write_text(f"name: repeat\nsemantics: defog\nquestions:\n{qs}")
        report = work / "eval-report"
        shutil.rmtree(report, ignore_errors=True)
        mock.reset(n)
        p = subprocess.run([args.steward, "eval", "--dataset", dataset, "--db", f"sqlite://{chinook}", "--model",
                            "openai:mock", "--concurrency", "1", "--fresh", "--max-steps", "1000",
                            "--report", report], env=s_env, cwd=home, capture_output=True, text=True)
        if p.returncode not in (0, 5) or not (report / "verdicts.jsonl").exists():
            raise SystemExit(f"steward eval (in-process variant) failed ({p.returncode}): {p.stderr[-1500:]}")
        mock.check("steward", n, r)
        verdicts = [json.loads(x) for x in (report / "verdicts.jsonl").read_text().splitlines() if x.strip()]
        s_runs = [v["latency_ms"] / 1000 for v in verdicts]
        print(f"[in one process, {n} tool calls] Steward eval latencies {[round(x, 3) for x in s_runs]} s; "
              f"LangChain create_agent {[round(x, 3) for x in lc_runs]} s (mock log checked)", flush=True)
        per_run[n] = (median(s_runs), median(lc_runs))
    n, m = args.steps, args.steps_long
    label = f"agent in one process, x{r} runs"
    (s_n, l_n), (s_m, l_m) = per_run[n], per_run[m]
    table.add(label, f"per run, {n} calls + answer (create_agent)", s_n, l_n, "s")
    table.add(label, f"per run, {m} calls + answer (create_agent)", s_m, l_m, "s")
    table.add(label, f"per model call at {m} calls (create_agent)", s_m / (m + 1), l_m / (m + 1), "s")
    table.add(label, f"one more step: (t{m} - t{n}) / {m - n}", (s_m - s_n) / (m - n), (l_m - l_n) / (m - n), "s")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steward", required=True)
    p.add_argument("--python", required=True, help="the venv's python, with LangChain")
    p.add_argument("--work", required=True)
    p.add_argument("--chinook", required=True)
    p.add_argument("--tables", type=int, default=1000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=5, help="tool calls per agent run")
    p.add_argument("--steps-long", type=int, default=20, help="tool calls for the marginal-step figure")
    p.add_argument("--repeat", type=int, default=10, help="runs in one process for the in-process variant")
    p.add_argument("--no-postgres", action="store_true")
    p.add_argument("--no-mariadb", action="store_true")
    p.add_argument("--only", choices=["introspect", "agent"])
    args = p.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    table = Table()
    started = time.time()
    load = os.getloadavg()[0]
    if args.only in (None, "introspect"):
        introspection(args, table, work)
    if args.only in (None, "agent"):
        agent(args, table, work)
    print()
    print(f"Steward vs LangChain, {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average "
          f"{load:.1f} at start, {args.runs} runs per figure (medians); every figure is a whole process "
          f"(start-up included) unless it says 'in one process'.")
    table.print()
    print(LEGEND)
    print(f"(took {time.time() - started:.0f} s)")


if __name__ == "__main__":
    main()
