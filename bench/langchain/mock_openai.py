#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server for the side-by-side agent benchmark.

It answers at once (no sleep), the same way for Steward and for LangChain: the reply to a request depends only
on how many tool results the request already carries. With N tool calls scripted, request k (0-based, k < N)
gets one tool call, and request N gets the final answer. The tool names follow the client: Steward's analyst
offers `list_tables` / `describe_tables` / `run_sql`, LangChain's SQLDatabaseToolkit offers
`sql_db_list_tables` / `sql_db_schema` / `sql_db_query`; the calls are the same in substance.

Every request is checked: from the second on, the tool result of the previous call must come back in the
request (matching `tool_call_id`, with the text that call must produce on Chinook). The mock logs each request;
`GET /_log` returns the log and `POST /_reset?steps=N` clears it (and sets N).

Wire format: POST /v1/chat/completions, non-streaming (`chat.completion`) or streaming when the body says
`"stream": true` (`chat.completion.chunk` server-sent events, tool-call deltas, `[DONE]`; a usage chunk when
`stream_options.include_usage` is set), over HTTP/1.1 keep-alive, each reply in one write with TCP_NODELAY (so no request waits on Nagle's
algorithm and the client's delayed ACK).

Run: mock_openai.py --port 0 --steps N  (prints the port on its first line).
"""

import argparse
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

QUESTION = "Which artists have the most albums, which countries spend the most, and which genres have most tracks?"

# (kind, SQL or tables, a text the tool's result must contain)
QUERIES = [
    (
        "SELECT ar.Name, COUNT(*) AS albums FROM Artist ar JOIN Album al ON al.ArtistId = ar.ArtistId "
        "GROUP BY ar.ArtistId, ar.Name ORDER BY albums DESC LIMIT 5",
        "Iron Maiden",
    ),
    (
        "SELECT BillingCountry, ROUND(SUM(Total), 2) AS spent FROM Invoice GROUP BY BillingCountry "
        "ORDER BY spent DESC LIMIT 5",
        "USA",
    ),
    (
        "SELECT g.Name, COUNT(*) AS tracks FROM Track t JOIN Genre g ON g.GenreId = t.GenreId "
        "GROUP BY g.GenreId, g.Name ORDER BY tracks DESC LIMIT 5",
        "Rock",
    ),
]
FINAL = "Iron Maiden has the most albums (21); the USA spends the most (523.06); Rock has the most tracks (1297)."


def script_step(step):
    """The k-th scripted call, client-neutral: (kind, argument, expected text in its result)."""
    if step == 0:
        return ("list", None, "Artist")
    if step == 1:
        return ("describe", ["Artist", "Album"], "ArtistId")
    sql, expect = QUERIES[(step - 2) % len(QUERIES)]
    return ("query", sql, expect)


def tool_call(flavour, step):
    """The tool call (name, arguments JSON) for this client's tools."""
    kind, arg, _ = script_step(step)
    if flavour == "steward":
        if kind == "list":
            return "list_tables", {}
        if kind == "describe":
            return "describe_tables", {"tables": arg}
        return "run_sql", {"sql": arg}
    if kind == "list":
        return "sql_db_list_tables", {"tool_input": ""}
    if kind == "describe":
        return "sql_db_schema", {"table_names": ", ".join(arg)}
    return "sql_db_query", {"query": arg}


def content_text(content):
    """A message's content as text (a string or a list of text parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


class State:
    """The request log, shared by the handler threads."""

    def __init__(self, steps):
        self.steps = steps
        self.lock = threading.Lock()
        self.log = []
        self.seq = 0


def plan(state, body):
    """Checks a request and returns (flavour, step, error or None)."""
    names = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if "run_sql" in names:
        flavour = "steward"
    elif "sql_db_query" in names:
        flavour = "langchain"
    else:
        return None, 0, f"unknown tools {names}"
    messages = body.get("messages") or []
    tool_msgs = [m for m in messages if m.get("role") == "tool"]
    step = len(tool_msgs)
    if step > 0:
        last = messages[-1]
        if last.get("role") != "tool":
            return flavour, step, "the last message is not a tool result"
        if last.get("tool_call_id") != f"call_{step - 1}":
            return flavour, step, f"tool_call_id {last.get('tool_call_id')!r} != call_{step - 1}"
        _, _, expect = script_step(step - 1)
        text = content_text(last.get("content"))
        if expect not in text:
            return flavour, step, f"result of call_{step - 1} lacks {expect!r}: {text[:300]!r}"
    if step > state.steps:
        return flavour, step, f"more tool results ({step}) than scripted ({state.steps})"
    return flavour, step, None


def completion(body, step, steps, flavour, error):
    """The assistant message and finish reason for this step."""
    if error is not None:
        return {"role": "assistant", "content": f"MOCK ERROR: {error}"}, "stop"
    if step >= steps:
        return {"role": "assistant", "content": FINAL}, "stop"
    name, args = tool_call(flavour, step)
    call = {"id": f"call_{step}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai/1"

    def log_message(self, *args):  # quiet
        pass

    def setup(self):
        super().setup()
        # No Nagle: a reply must not wait for the client's delayed ACK (40 ms on Linux).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send_all(self, status, headers, body):
        """The whole reply (status line, headers, body) in one write."""
        head = f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers)
        self.wfile.write(head.encode() + b"\r\n" + body)

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_all(status, [("Content-Type", "application/json"), ("Content-Length", str(len(data)))], data)

    def do_GET(self):
        state = self.server.state
        if self.path.startswith("/_log"):
            with state.lock:
                return self.send_json(200, state.log)
        if self.path.rstrip("/").endswith("/models"):
            return self.send_json(200, {"object": "list", "data": [{"id": "mock", "object": "model", "created": 0, "owned_by": "mock"}]})
        self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})

    def do_POST(self):
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.path.startswith("/_reset"):
            # /_reset?steps=N clears the log and sets how many tool calls the script makes.
            with state.lock:
                state.log = []
                if "steps=" in self.path:
                    state.steps = int(self.path.split("steps=", 1)[1].split("&", 1)[0])
            return self.send_json(200, {"ok": True})
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self.send_json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
        received = time.time()
        body = json.loads(raw)
        flavour, step, error = plan(state, body)
        message, finish = completion(body, step, state.steps, flavour, error)
        stream = bool(body.get("stream"))
        with state.lock:
            state.seq += 1
            seq = state.seq
            state.log.append({
                "seq": seq, "t": received, "client": flavour, "step": step, "stream": stream,
                "tools": len(body.get("tools") or []), "messages": len(body.get("messages") or []),
                "request_bytes": len(raw), "reply": "answer" if finish == "stop" else message["tool_calls"][0]["function"]["name"],
                "error": error, "user_agent": self.headers.get("User-Agent", ""),
            })
        ident = f"chatcmpl-mock{seq}"
        model = body.get("model", "mock")
        usage = {"prompt_tokens": 100 + 50 * step, "completion_tokens": 20, "total_tokens": 120 + 50 * step}
        if not stream:
            message = dict(message, refusal=None)
            return self.send_json(200, {
                "id": ident, "object": "chat.completion", "created": int(received), "model": model,
                "system_fingerprint": "fp_mock",
                "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
                "usage": usage,
            })

        def chunk(choices, **extra):
            obj = {"id": ident, "object": "chat.completion.chunk", "created": int(received), "model": model,
                   "system_fingerprint": "fp_mock", "choices": choices}
            obj.update(extra)
            return f"data: {json.dumps(obj)}\n\n"

        events = []
        if finish == "tool_calls":
            call = message["tool_calls"][0]
            first = {"index": 0, "id": call["id"], "type": "function", "function": {"name": call["function"]["name"], "arguments": ""}}
            events.append(chunk([{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [first]}, "logprobs": None, "finish_reason": None}]))
            args = call["function"]["arguments"]
            for i in range(0, len(args), 40):
                part = {"index": 0, "function": {"arguments": args[i:i + 40]}}
                events.append(chunk([{"index": 0, "delta": {"tool_calls": [part]}, "logprobs": None, "finish_reason": None}]))
        else:
            events.append(chunk([{"index": 0, "delta": {"role": "assistant", "content": "", "refusal": None}, "logprobs": None, "finish_reason": None}]))
            text = message["content"]
            for i in range(0, len(text), 40):
                events.append(chunk([{"index": 0, "delta": {"content": text[i:i + 40]}, "logprobs": None, "finish_reason": None}]))
        events.append(chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]))
        if (body.get("stream_options") or {}).get("include_usage"):
            events.append(chunk([], usage=usage))
        events.append("data: [DONE]\n\n")
        data = "".join(events).encode()
        body = f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n"
        self.send_all(200, [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                            ("Transfer-Encoding", "chunked")], body)


def stop_when_orphaned(parent, lifetime):
    """Ends the process when the driver that started it is gone, or after `lifetime` seconds at most."""
    deadline = time.monotonic() + lifetime
    while os.getppid() == parent and time.monotonic() < deadline:
        time.sleep(0.5)
    os._exit(0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--lifetime", type=float, default=3600, help="seconds before it stops by itself")
    args = parser.parse_args()
    watchdog = threading.Thread(target=stop_when_orphaned, args=(os.getppid(), args.lifetime), daemon=True)
    watchdog.start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.state = State(args.steps)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
