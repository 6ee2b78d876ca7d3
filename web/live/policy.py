"""The live service's timing policy, in one place: each figure with what it trades.

The service's latency (window end → frame on the console) is spent in a few waits, and each of
these figures moves one of them against something else. Change one here, then run
`benchmarks/live_console.py` at 40, 400 and 2,000 lines/s with CPU-bound neighbours too.
"""

from __future__ import annotations

# -- taking chat in --------------------------------------------------------------------------------

COALESCE_S = 0.25
"""Frames arriving within this long are absorbed together. The gates, the tagger and the engine cost
mostly per call: fewer, larger batches leave the worker free sooner. Against it: an acknowledgement
waits up to this long more."""
BATCH_LINES = 5000
"""A batch is absorbed at once when it holds this many lines, whatever is left of COALESCE_S: past it
a batch costs more per line (memory), and the acknowledgements of its first frames wait longer."""

# -- when a window may be finished -----------------------------------------------------------------

SETTLE_S = 0.03
"""After a window's end its last lines are taken to have arrived (stragglers still count until end +
grace). Shorter: the window is finished sooner, and a line sent just before the end more often
arrives after it was ranked (it is then ranked again, at its due time). Longer: every window waits."""
FINISH_NS_PER_LINE = 100_000
"""What finishing a window costs per line it holds, until windows finished here have been timed (a
moving average then). Decides whether a window is cheap enough to finish halfway through its grace
before every sender has passed it (a second finish, should a line still come, costs no more than
finishing it at its due time)."""

# -- the judging helper ----------------------------------------------------------------------------

HELPER_SHARE = 3
"""Of the windows ending together, the judging helper finishes this many for each one the worker
finishes: the worker also stores and pushes all of them (about 30 ms a 3,000-line window, against
about 80 ms to finish one), with the event loop sending frames beside it. More: the worker is freer
to store; fewer: the helper's answers, read over a socket, wait less in line."""
HELPER_ANSWER_WAIT_S = 20.0
"""The longest the service waits for the helper's windows; past this the helper is taken as failed
and its windows are judged here. Shorter: a stuck helper costs less; too short: a loaded machine's
slow answer is taken for a failure, and the windows are judged twice."""
HELPER_SEND_BUFFER = 8 << 20
"""Bytes of answers the helper's socket may hold before the service reads them (a 1,700-line window's
answer is about 2 MB; the system caps it, `net.core.wmem_max` on Linux). Larger: the service reads an
answer in one piece instead of taking turns with the helper's writing thread; it costs only memory
queued, never more than the answers of one window end."""
HELPER_TIDY_AFTER_S = 2.0
"""After answering, the helper waits this long before its cycle collection: while the service stores
and pushes the windows, the other core is better left to it and to the consoles."""

# -- after windows are pushed ------------------------------------------------------------------------

SEND_WAIT_S = 0.5
"""After windows are pushed, the worker waits at most this long for the consoles to be sent them
before it takes the next batch: two threads busy at once pass the interpreter lock back and forth
on every system call the sending makes. Longer: a slow console holds the worker (and the next acks)."""
TIDY_AFTER_S = 2.0
"""After windows are pushed, the tidy (SQLite's log into the database, the held cycle collection)
waits this long: its collection holds every thread, the event loop's sending of the frames included."""
QUIET_MARGIN_S = 3.0
"""Background work beside the service (the admin pages' warm-up) waits from this long before a
window's end until it is out: it would take the interpreter from the worker in the latency path."""
SWITCH_INTERVAL_S = 0.001
"""How long a thread may hold the interpreter lock while another waits for it (Python's default is
5 ms). The worker hands the lock over on every database statement and some table operations, and
waits as long to get it back whenever the event loop is busy (sending a window's frame, taking chat
in): each of those waits is in the latency path. Shorter costs more switches everywhere."""

# -- consoles ----------------------------------------------------------------------------------------

TICK_S = 5.0
"""Every this long each console is told the newest frame number and the store's figures: how soon a
console that missed a frame notices (a gap in live frames is noticed at once), against a frame and a
read of the store every so often."""
TALLY_EVERY_S = 1.0
"""The store's figures are read again at most this often, however many consoles and status pages ask."""
REPUBLISH_S = 6 * 3600
"""At start, windows stored to be pushed but never sent (a kill between the two) are sent if they
began within this long: older ones belong to a broadcast long over, visible in the admin pages."""
