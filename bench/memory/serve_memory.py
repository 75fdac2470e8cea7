#!/usr/bin/env python3
"""Memory of `steward serve` over turns with large answers.

Starts a mock OpenAI-compatible model (this process, http.server) that answers every chat completion with
ANSWER_BYTES of text (streamed as `chat.completion.chunk` deltas when the request asks for a stream, else one
`chat.completion`), starts `steward serve` on a fresh SQLite store with one agent, posts MESSAGES messages one
after another (each read to its `answer` event) and reports the server's resident memory from
/proc/PID/status: VmRSS before, the highest VmRSS seen while each message ran (sampled every 10 ms), VmRSS after
each message, VmHWM, VmRSS after IDLE seconds, and (with --trim) VmRSS after gdb makes the process call
glibc's malloc_trim(0).

    python3 bench/memory/serve_memory.py [--steward target/release/steward] [--messages 20]
        [--answer-bytes 4194304] [--same-conversation] [--plain] [--arena-max N] [--env KEY=VALUE]
        [--trim] [--idle 5]

See bench/memory/README.md.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ANSWER_CHUNK = 8192


def answer_text(size):
    words = "the quick brown fox jumps over the lazy dog while steward counts every byte it keeps "
    text = (words * (size // len(words) + 1))[:size]
    return text


class Mock:
    def __init__(self, size):
        self.text = answer_text(size)
        self.calls = 0
        self.request_bytes = []
        chunks = []
        for i in range(0, len(self.text), ANSWER_CHUNK):
            piece = self.text[i : i + ANSWER_CHUNK]
            chunk = {
                "id": "chatcmpl-mem",
                "object": "chat.completion.chunk",
                "created": 1,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
            }
            chunks.append("data: " + json.dumps(chunk) + "\n\n")
        last = {
            "id": "chatcmpl-mem",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 200, "completion_tokens": size // 4, "total_tokens": 200 + size // 4},
        }
        chunks.append("data: " + json.dumps(last) + "\n\ndata: [DONE]\n\n")
        self.streamed = "".join(chunks).encode()
        self.plain = json.dumps(
            {
                "id": "chatcmpl-mem",
                "object": "chat.completion",
                "created": 1,
                "model": "gpt-4o-mini-2024-07-18",
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": self.text}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 200, "completion_tokens": size // 4, "total_tokens": 200 + size // 4},
            }
        ).encode()
        mock = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", "0"))
                body = self.rfile.read(length)
                mock.calls += 1
                mock.request_bytes.append(length)
                try:
                    stream = bool(json.loads(body).get("stream"))
                except ValueError:
                    stream = False
                payload = mock.streamed if stream and not mock.force_plain else mock.plain
                self.send_response(200)
                self.send_header("content-type", "text/event-stream" if payload is mock.streamed else "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                view = memoryview(payload)
                for i in range(0, len(view), 65536):
                    self.wfile.write(view[i : i + 65536])

        self.force_plain = False
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.base = "http://127.0.0.1:%d/v1" % self.server.server_address[1]


def status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                out[key] = int(value.split()[0]) / 1024.0
    return out


class Sampler:
    """Samples VmRSS every 10 ms while a message runs."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0.0
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            try:
                self.peak = max(self.peak, status(self.pid)["VmRSS"])
            except (OSError, KeyError):
                return
            time.sleep(0.01)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


def request(method, url, body=None, accept="application/json", timeout=600):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("content-type", "application/json")
    req.add_header("accept", accept)
    return urllib.request.urlopen(req, timeout=timeout)


def post_message(base, conversation, text):
    """Posts a message and reads its event stream; returns (answer length, events seen, SSE bytes)."""
    response = request(
        "POST", "%s/api/conversations/%s/messages" % (base, conversation), {"content": text}, "text/event-stream"
    )
    event, data, answer, seen, total = None, [], None, [], 0
    for raw in response:
        total += len(raw)
        line = raw.decode().rstrip("\r\n")
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif line == "":
            if event or data:
                seen.append(event)
                if event == "answer":
                    answer = json.loads("\n".join(data)).get("content", "")
                elif event == "error":
                    raise RuntimeError("error event: %s" % "\n".join(data)[:500])
            event, data = None, []
    return (len(answer) if answer is not None else None), seen, total


def start_server(binary, workdir, model_base, arena_max, extra_env=()):
    config = os.path.join(workdir, "steward.yaml")
    with open(config, "w") as f:
        f.write(
            "agents:\n  helper:\n    description: Answers.\n    instructions: You answer.\n    tools: [calculator]\n"
            "server:\n  limits: {requests_per_minute: 1000000, concurrent_runs: 64}\n"
        )
    home = os.path.join(workdir, "home")
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "XDG_DATA_HOME": home + "/data",
        "XDG_CACHE_HOME": home + "/cache",
        "XDG_STATE_HOME": home + "/state",
        "NO_COLOR": "1",
        "OLLAMA_HOST": "127.0.0.1:9",
        "OPENAI_BASE_URL": model_base,
        "OPENAI_API_KEY": "test",
    }
    if arena_max:
        env["MALLOC_ARENA_MAX"] = str(arena_max)
    for item in extra_env:
        key, _, value = item.partition("=")
        env[key] = value
    store = "sqlite://%s/store.sqlite" % workdir
    child = subprocess.Popen(
        [binary, "serve", "-c", config, "--bind", "127.0.0.1:0", "--store", store, "--grace", "2"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    for raw in child.stderr:
        line = raw.decode(errors="replace")
        m = re.search(r"listening on (\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in child.stderr], daemon=True).start()
            base = m.group(1)
            if not base.startswith("http"):
                base = "http://" + base
            return child, base.rstrip("/")
    raise RuntimeError("steward serve ended before listening (exit %s)" % child.wait())


def trim(pid):
    """Makes the process call malloc_trim(0) through gdb; returns gdb's output or an error."""
    if not shutil.which("gdb"):
        return "gdb not found"
    out = subprocess.run(
        ["gdb", "-p", str(pid), "-batch", "-ex", "call (int) malloc_trim(0)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    m = re.search(r"\$1 = (-?\d+)", out.stdout)
    return "malloc_trim returned %s" % (m.group(1) if m else "? (%s)" % out.stderr.strip()[-200:])


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    default = os.path.join(root, "target/release/steward")
    if not os.path.exists(default):
        default = os.path.join(root, "target/debug/steward")
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steward", default=os.environ.get("STEWARD_BIN", default))
    p.add_argument("--messages", type=int, default=20)
    p.add_argument("--answer-bytes", type=int, default=4 * 1024 * 1024)
    p.add_argument("--same-conversation", action="store_true", help="post every message in one conversation")
    p.add_argument("--plain", action="store_true", help="the model answers in one JSON body, not a stream")
    p.add_argument("--arena-max", type=int, default=0, help="run the server with MALLOC_ARENA_MAX=N")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                   help="more environment for the server, e.g. MALLOC_MMAP_THRESHOLD_=1048576 (repeatable)")
    p.add_argument("--trim", action="store_true", help="at the end, call malloc_trim(0) in the server via gdb")
    p.add_argument("--idle", type=float, default=5.0, help="seconds to wait after the last message")
    p.add_argument("--quiet", action="store_true", help="no line per message")
    args = p.parse_args()

    mock = Mock(args.answer_bytes)
    mock.force_plain = args.plain
    workdir = tempfile.mkdtemp(prefix="steward-mem-")
    child, base = start_server(args.steward, workdir, mock.base, args.arena_max, args.env)
    pid = child.pid
    try:
        time.sleep(0.5)
        start = status(pid)
        print(
            "steward serve pid %d (%s), answers of %d bytes (%s), %d messages, %s%s"
            % (
                pid,
                args.steward,
                args.answer_bytes,
                "plain" if args.plain else "streamed",
                args.messages,
                "one conversation" if args.same_conversation else "one conversation each",
                (", MALLOC_ARENA_MAX=%d" % args.arena_max if args.arena_max else "")
                + "".join(", " + e for e in args.env),
            )
        )
        print("before: VmRSS %.1f MiB" % start["VmRSS"])
        conversation = None
        peak_during = 0.0
        wall = time.time()
        for i in range(args.messages):
            if conversation is None or not args.same_conversation:
                with request("POST", base + "/api/conversations", {"agent": "helper"}) as r:
                    conversation = json.loads(r.read())["id"]
            sampler = Sampler(pid)
            t = time.time()
            got, seen, sse_bytes = post_message(base, conversation, "Write a long text, please (%d)." % i)
            peak = sampler.stop()
            peak_during = max(peak_during, peak)
            if got != args.answer_bytes:
                print("message %d: answer of %s bytes, expected %d; events %s" % (i + 1, got, args.answer_bytes, seen))
                sys.exit(1)
            now = status(pid)
            if not args.quiet:
                print(
                    "message %2d: %.2f s, SSE %.1f MiB, model request %.1f KiB; VmRSS peak during %.1f MiB, after %.1f MiB"
                    % (i + 1, time.time() - t, sse_bytes / 1048576, mock.request_bytes[-1] / 1024, peak, now["VmRSS"])
                )
        done = status(pid)
        print(
            "after %d messages (%.1f s): VmRSS %.1f MiB (anon %.1f), VmHWM %.1f MiB, highest VmRSS while a message ran %.1f MiB"
            % (args.messages, time.time() - wall, done["VmRSS"], done["RssAnon"], done["VmHWM"], peak_during)
        )
        time.sleep(args.idle)
        idle = status(pid)
        print("after %.0f s idle: VmRSS %.1f MiB (anon %.1f)" % (args.idle, idle["VmRSS"], idle["RssAnon"]))
        if args.trim:
            note = trim(pid)
            time.sleep(0.5)
            trimmed = status(pid)
            print("after malloc_trim(0): VmRSS %.1f MiB (anon %.1f) [%s]" % (trimmed["VmRSS"], trimmed["RssAnon"], note))
        if mock.calls != args.messages:
            print("WARNING: the model got %d calls for %d messages" % (mock.calls, args.messages))
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
