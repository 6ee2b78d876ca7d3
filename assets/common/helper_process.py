"""A helper process: a fresh interpreter running one module of this project, reached over a socket.

`HelperProcess("package.module", *args)` starts `python -m package.module FD *args` with one end
of a socket pair as file descriptor FD; both ends speak `multiprocessing.connection.Connection`
(pickled messages). The helper is not a fork: a forked copy of a large process makes every page
the parent then writes a copy-on-write fault. It reads its socket until it closes (`serve_socket`
hands it its end), so it never outlives the process that started it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from multiprocessing.connection import Connection

STOP_WAIT_S = 5.0


class HelperProcess:
    def __init__(self, module: str, *args: str) -> None:
        ours, theirs = socket.socketpair()
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
