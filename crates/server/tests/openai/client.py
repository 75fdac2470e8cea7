"""Drives Steward's /v1 with the official OpenAI Python SDK and prints what came back, as JSON.

Usage: client.py BASE_URL AGENT QUESTION
"""
import json
import sys
import urllib.error
import urllib.request

import openai

base, agent, question = sys.argv[1], sys.argv[2], sys.argv[3]
client = openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)
messages = [{"role": "user", "content": question}]
out = {}


def error(e):
    return {"status": e.status_code, "class": type(e).__name__, "message": e.message, "code": e.code,
            "type": e.type, "param": e.param, "body": e.body}


out["models"] = [m.model_dump() for m in client.models.list().data]
out["retrieved"] = client.models.retrieve(agent).model_dump()
try:
    client.models.retrieve("no-such-agent")
    out["missing_model"] = None
except openai.APIStatusError as e:
    out["missing_model"] = error(e)

plain = client.chat.completions.create(model=agent, messages=messages)
out["plain"] = plain.model_dump()

chunks = list(client.chat.completions.create(model=agent, messages=messages, stream=True,
                                             stream_options={"include_usage": True}))
out["stream_usage"] = {
    "content": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
    "finish": [c.choices[0].finish_reason for c in chunks if c.choices],
    "usage_before_last": [c.usage for c in chunks[:-1]],
    "last": chunks[-1].model_dump(),
    "created": sorted({c.created for c in chunks}),
    "ids": sorted({c.id for c in chunks}),
}

chunks = list(client.chat.completions.create(model=agent, messages=messages, stream=True))
out["stream"] = {
    "content": "".join(c.choices[0].delta.content or "" for c in chunks if c.choices),
    "usage": [c.usage for c in chunks if c.usage is not None],
    "empty_choices": sum(1 for c in chunks if not c.choices),
}

for name, call in [
    ("unknown_model", lambda: client.chat.completions.create(model="no-such-agent", messages=messages)),
    ("bad_role", lambda: client.chat.completions.create(
        model=agent, messages=[{"role": "wizard", "content": "hi"}])),
    ("no_question", lambda: client.chat.completions.create(
        model=agent, messages=[{"role": "assistant", "content": "hi"}])),
]:
    try:
        call()
        out[name] = None
    except openai.APIStatusError as e:
        out[name] = error(e)



def raw(method, path, body=None, content_type=None):
    request = urllib.request.Request(base + path, data=body, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request) as response:
            status, headers, content = response.status, response.headers, response.read()
    except urllib.error.HTTPError as e:
        status, headers, content = e.code, e.headers, e.read()
    return {"status": status, "content_type": headers.get("content-type"),
            "body": json.loads(content) if content else None}


out["malformed"] = raw("POST", "/v1/chat/completions", b'{"model": "x", "messages": [', "application/json")
out["no_content_type"] = raw("POST", "/v1/chat/completions", b'{"model": "x"}')
out["wrong_shape"] = raw("POST", "/v1/chat/completions", b'{"model": 5, "messages": "hi"}', "application/json")
out["no_route"] = raw("GET", "/v1/embeddings")
out["wrong_method"] = raw("GET", "/v1/chat/completions")

print(json.dumps(out))
