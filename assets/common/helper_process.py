"""A helper process: a fresh interpreter running one module of this project, reached over a socket.

`HelperProcess("package.module", *args)` starts `python -m package.module FD *args` with one end
of a socket pair as file descriptor FD; both ends speak `multiprocessing.connection.Connection`
(pickled messages). The helper is not a fork: a forked copy of a large process makes every page
the parent then writes a copy-on-write fault. It reads its socket until it closes (`serve_socket`
hands it its end), so it never outlives the process that started it.
"""

from __future__ import annotations

import os
import queue
import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler

STOP_WAIT_S = 5.0


class HelperProcess:
    def __init__(self, module: str, *args: str, send_buffer: int | None = None) -> None:
        """`send_buffer`: bytes the helper's end may queue before a send waits for this process to read
        (the system caps it: `net.core.wmem_max` on Linux)."""
        ours, theirs = socket.socketpair()
        if send_buffer:
            theirs.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            # its stdout is this process's standard error (file descriptor 2, whatever `sys.stderr`
            # has been replaced with, as a Celery worker does): what it prints stays out of any output
            self.proc = subprocess.Popen([sys.executable, "-m", module, str(theirs.fileno()), *args],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=2, env=env)
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, kill: bool = False) -> None:
        """Close the socket and wait for the helper to exit; `kill`: at once (it may be busy)."""
        self.conn.close()
        if kill:
            self.proc.kill()
        try:
            self.proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def serve_socket(argv: list[str]) -> tuple[Connection, list[str]]:
    """In the helper: its end of the socket (`argv[1]`) and the arguments after it."""
    return Connection(int(argv[1])), argv[2:]


class Replies:
    """What a helper sends back, written to its socket by a thread of its own, in order.

    A reply larger than the socket holds returns from a plain `send` only once the other process
    has read it, and that process may be busy: the helper would wait idle. Here it pickles the
    reply and goes on with its next piece of work while the thread writes (releasing the
    interpreter lock whenever the socket is full)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._write, name="helper-replies", daemon=True)
        self.thread.start()

    def send(self, message) -> None:
        """`message` pickled now (as `Connection.send` pickles it) and written after those before it."""
        self.queue.put(ForkingPickler.dumps(message))

    def _write(self) -> None:
        while True:
            data = self.queue.get()
            try:
                self.conn.send_bytes(data)
            except OSError:  # the other end closed: the helper's next read ends it
                return
