"""LangChain's introspection, as its SQL agent does it: SQLDatabase.from_uri (SQLAlchemy reflects every table)
then get_table_info() for all tables (CREATE TABLE text plus 3 sample rows per table, the default).

Run: python lc_introspect.py URL [--deep]  -> prints "tables=N bytes=B ..." (the text itself is not printed).

SQLAlchemy reflects a foreign key's target table recursively, so a chain of foreign keys deeper than about a
hundred tables (the generated schema chains all 1,000) exceeds Python's default recursion limit and
from_uri raises RecursionError. With --deep the work runs in a thread with a 512 MiB stack and a recursion
limit of 100,000, which is what a user would have to do; without it, a RecursionError is reported and exits 3.
"""

import sys
import threading

result = {}


def work(url):
    from langchain_community.utilities import SQLDatabase

    try:
        db = SQLDatabase.from_uri(url)
        info = db.get_table_info()
    except RecursionError:
        result["error"] = "RecursionError"
        return
    tables = len(db.get_usable_table_names())
    result["line"] = f"tables={tables} bytes={len(info.encode())} create_tables={info.count('CREATE TABLE')}"


def main():
    url = sys.argv[1]
    if "--deep" in sys.argv[2:]:
        sys.setrecursionlimit(100_000)
        threading.stack_size(512 * 1024 * 1024)
        thread = threading.Thread(target=work, args=(url,))
        thread.start()
        thread.join()
    else:
        work(url)
    if "error" in result:
        print(result["error"])
        return 3
    print(result["line"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
