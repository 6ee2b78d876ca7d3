"""A helper's replies are written by a thread of its own: sending one larger than the socket holds
returns at once, while the other process is busy, and the replies arrive whole and in order."""

from __future__ import annotations

import socket
import threading
from multiprocessing.connection import Connection

from assets.common.helper_process import Replies


def test_replies_larger_than_the_socket_holds_are_sent_without_waiting_for_the_reader():
    ours, theirs = socket.socketpair()
    size = theirs.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    reader, writer = Connection(ours.detach()), Connection(theirs.detach())
    replies = [("ok", bytes([n]) * (4 * size + n)) for n in range(3)]  # each several times what the socket holds
    sent = threading.Event()

    def helper():
        out = Replies(writer)
        for reply in replies:
            out.send(reply)
        sent.set()

    threading.Thread(target=helper, daemon=True).start()
    # Nothing is read until every reply was sent: a plain `Connection.send` would wait on the first.
    assert sent.wait(30), f"sending waited for the reader (the socket holds {size} bytes)"
    assert [reader.recv() for _ in replies] == replies
    reader.close()
    writer.close()
