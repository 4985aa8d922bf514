"""Serving a stand-in service on 127.0.0.1 from a thread, for the tests that drive a real client
against it (the hub stand-ins of `leaderboard push` and of the intake)."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


class serving:
    """Context manager: `state` served by a subclass of `handler` (which reads it as its class
    attribute `hub`) until the block ends or `lifetime_s` passes, whichever comes first, so a
    client that hangs cannot keep the server alive. `state.url` is set to the server's address."""

    def __init__(self, state: Any, handler: type[BaseHTTPRequestHandler], lifetime_s: float) -> None:
        self.hub = state
        self.server = HTTPServer(("127.0.0.1", 0), type("Handler", (handler,), {"hub": state}))
        self.server.timeout = 0.2
        self.hub.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.stop = threading.Event()
        self.deadline = time.monotonic() + lifetime_s
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stop.is_set() and time.monotonic() < self.deadline:
            self.server.handle_request()
        self.server.server_close()

    def __enter__(self) -> Any:
        self.thread.start()
        return self.hub

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
