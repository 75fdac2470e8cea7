#!/usr/bin/env python3
"""The generated schema of crates/sql/benches/introspect.rs, as SQL: TABLES tables t0..t{N-1}, each with 20
columns (id, c1..c18 of INTEGER / REAL-or-DOUBLE / TEXT, parent_id with a foreign key to the table before it)
and three rows.

Run: gen_schema.py sqlite|postgres|mysql [TABLES]  > schema.sql
"""

import sys


def schema(dialect, tables):
    postgres = dialect == "postgres"
    out = []
    for i in range(tables):
        columns = ["id INTEGER PRIMARY KEY"]
        for c in range(1, 19):
            ty = {0: "TEXT", 1: "INTEGER"}.get(c % 3, "DOUBLE PRECISION" if postgres else "REAL")
            columns.append(f"c{c} {ty}")
        if i == 0:
            columns.append("parent_id INTEGER")
        elif dialect == "mysql":
            # MySQL ignores an inline REFERENCES; a table constraint is a real foreign key.
            columns.append(f"parent_id INTEGER, FOREIGN KEY (parent_id) REFERENCES t{i - 1}(id)")
        else:
            columns.append(f"parent_id INTEGER REFERENCES t{i - 1}(id)")
        out.append(f"CREATE TABLE t{i} ({', '.join(columns)});")
        for r in range(1, 4):
            values = []
            for c in range(1, 19):
                if c % 3 == 0:
                    values.append(f"'value {r} of {c}'")
                elif c % 3 == 1:
                    values.append(str(r * c))
                else:
                    values.append(f"{r * c}.5")
            out.append(f"INSERT INTO t{i} VALUES ({r}, {', '.join(values)}, NULL);")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    dialect = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    sys.stdout.write("BEGIN;\n" + schema(dialect, n) + "COMMIT;\n")
