#!/usr/bin/env python3
"""Groups the blocks logged by bigalloc.so by where they were allocated.

    python3 bench/memory/bigalloc_report.py LOG BINARY

LOG is what bigalloc.so wrote (BIGALLOC_LOG), BINARY the program it traced (built with line tables, as the
workspace's dev profile is). Prints one line per call site, largest total first: how many blocks, malloc or
realloc, total MiB, the first frame and up to three frames of the caller below the allocator and library code.
Needs addr2line (binutils).
"""
import collections
import os
import re
import subprocess
import sys

if len(sys.argv) != 3:
    sys.exit(__doc__)
binary = sys.argv[2]
base = re.escape(os.path.basename(binary))
records = []
cur = None
for line in open(sys.argv[1]):
    if line.startswith("== "):
        _, kind, size = line.split()
        cur = [kind, int(size), []]
        records.append(cur)
    else:
        m = re.match(r".*" + base + r"\(\+0x([0-9a-f]+)\)", line)
        if m and cur:
            cur[2].append(int(m.group(1), 16))
offs = sorted({o for r in records for o in r[2]})
out = subprocess.run(["addr2line", "-f", "-C", "-e", binary] + [hex(o - 1) for o in offs], capture_output=True, text=True).stdout.split("\n")
names = {}
for i, o in enumerate(offs):
    names[o] = (out[2 * i], out[2 * i + 1])
SKIP = re.compile(r"^(sqlite3|dbMalloc|vdbe|sqlx_core|<sqlx|sqlx_sqlite::(value|row|statement)|serde_core|<serde_core|<<serde|indexmap|<indexmap|<http_body|http_body|<&mut T as bytes|<steward_core::message::Message as core::clone|<steward_core::event::Event as core::clone|<steward_core::event::EventRecord as core|<steward_core::outcome::Outcome as core::clone|steward_core::outcome::_::|<steward_app::store::engine::Arg|alloc::|core::|std::|<alloc::|<core::|<std::|serde_json::|<serde_json|<&mut serde_json|serde::|<serde|bytes::|<bytes|hashbrown|tokio::|<tokio|futures|<futures|hyper|<hyper|axum|<axum|tower|<tower|__rust|rust_|<T as alloc|<str as|<\[T\]|<\w+ as core::)")
agg = collections.Counter()
sizes = collections.defaultdict(int)
for kind, size, stack in records:
    frames = []
    first = None
    for o in stack:
        if first is None and names[o][0] not in ("??",) and "bigalloc" not in names[o][0]:
            first = re.sub(r"::h[0-9a-f]{16}$", "", names[o][0])[:40]
        fn, loc = names[o]
        if SKIP.match(fn) or fn == "??":
            continue
        fn = re.sub(r"::h[0-9a-f]{16}$", "", fn)
        loc = re.sub(r" \(discriminator \d+\)", "", loc.replace(os.getcwd() + "/", "").split("/.cargo/registry/src/")[-1])
        frames.append("%s [%s]" % (fn[:110], loc[-60:]))
        if len(frames) >= 3:
            break
    key = (kind, "{%s} " % first + (" <- ".join(frames) if frames else "?"))
    agg[key] += 1
    sizes[key] += size
for (kind, stack), n in sorted(agg.items(), key=lambda kv: -sizes[kv[0]]):
    print("%3d x %-7s total %7.1f MiB  %s" % (n, kind, sizes[(kind, stack)] / 1048576, stack))
