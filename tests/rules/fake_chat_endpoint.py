"""A small OpenAI-format chat-completions server on a free loopback port, for the adapters' tests.

It runs in a thread of the test process (no network beyond 127.0.0.1) and answers each request
with what the test's `answer(request)` function returns: `(status, message content)` or
`("sleep", seconds)` to let the client time out. Every request is recorded with its headers.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeEndpoint:
    def __init__(self, answer):
        self.answer = answer
        self.requests: list[dict] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                endpoint.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, content = endpoint.answer(body)
                if status == "sleep":
                    time.sleep(content)
                    status, content = 200, json.dumps({"tags": []})
                payload = {"id": "x", "object": "chat.completion", "model": body.get("model"),
                           "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}
                data = json.dumps(payload, ensure_ascii=False).encode() if status == 200 else b'{"error": "boom"}'
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def user_text(request: dict) -> str:
    return request["messages"][-1]["content"]
