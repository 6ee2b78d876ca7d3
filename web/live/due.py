"""The window buffer's clock: when each open window is due (end + grace), and whether one may be
finished early, in its grace. Owned by the event loop.

A window's last lines are taken to have arrived `policy.SETTLE_S` after its end. From then until it
is due it may be finished early once it is complete — every connection that sent lines to it has
passed it (a chat connection sends in time order: its line of a later window means its lines of this
one are in) or closed with all its frames absorbed — or, when finishing it is cheap at the cost
measured on earlier windows, halfway through its grace whatever the senders: a line still on its way
only makes it finish again at its due time, which it would have cost then anyway. For the same reason
a window is finished with those ending with it once it would otherwise wait behind them past its
due time.
"""

from __future__ import annotations

from live import landing
from web.live.buffer import WindowBuffer
from web.live.finishing import Finishing
from web.live.intake import Origin
from web.live.policy import QUIET_MARGIN_S, SETTLE_S
from web.live.windows import Key
from rules.live_pick.config import LivePickConfig


class Due:
    def __init__(self, buffer: WindowBuffer, finishing: Finishing, rules: LivePickConfig, grace_ns: int, clock):
        self.buffer, self.finishing, self.rules, self.grace, self.clock = buffer, finishing, rules, grace_ns, clock
        self.settle = int(SETTLE_S * 1e9)
        self.deadlines: dict[Key, int] = {}
        """Open window → when it is due (end + grace)."""
        self.senders: dict[Key, set[Origin]] = {}
        """The connections that sent lines to each open window (`complete`)."""
        self.ranked_early: set[Key] = set()
        """Windows already ranked in their grace (or asked to be)."""
        self.next_end: int | None = None
        """The end (ns) of the next window to finish, None when none is open: set as the drive loop
        turns, so it stays on a window until that one is out (read by `quiet` from other threads)."""

    def nearest(self) -> int | None:
        """When the next window is due (and `next_end` set to its end)."""
        nearest = min(self.deadlines.values(), default=None)
        self.next_end = None if nearest is None else nearest - self.grace
        return nearest

    def take_due(self, now: int) -> list[Key]:
        """The windows due now, in due order, no longer watched."""
        keys = [k for _, k in sorted((end, k) for k, end in self.deadlines.items() if end <= now)]
        for k in keys:
            del self.deadlines[k]
            self.ranked_early.discard(k)
            self.senders.pop(k, None)
        return keys

    def sent_to(self, key: Key, origin: Origin, opened: bool) -> None:
        """A line of `origin` was absorbed into window `key` (`opened`: just opened by its batch)."""
        if key in self.deadlines or opened:  # open: not a late line
            self.senders.setdefault(key, set()).add(origin)
        if key[1] > origin.passed.get(key[0], key[1] - 1):
            origin.passed[key[0]] = key[1]

    def quiet(self, margin_s: float = QUIET_MARGIN_S) -> bool:
        """Whether work beside the service (the admin pages' warm-up) may take the interpreter now:
        no window ends within `margin_s` or has ended and is not out yet. Safe from any thread."""
        end = self.next_end
        return end is None or end - int(margin_s * 1e9) > self.clock()

    def settled(self, now: int) -> bool:
        """Whether a window not ranked yet is past its end and settle (a batch waiting then goes in at once)."""
        return any(due - self.grace + self.settle <= now for k, due in self.deadlines.items() if k not in self.ranked_early)

    def next_look(self, now: int) -> int | None:
        """When a window not ranked yet next comes past its settle or its midway point."""
        return min((t for k, due in self.deadlines.items() if k not in self.ranked_early
                    for t in (due - self.grace + self.settle, self.midway(k)) if t > now), default=None)

    def ripe(self, now: int, pending: list = ()) -> list[Key]:
        """The windows to finish early now: past their end and settle, not finished yet, and either
        complete (`complete`, counting the frames `pending` that arrived but are not absorbed yet)
        or, when cheap to finish (`cheap`), halfway through their grace. With them, every other
        such window that would otherwise wait behind them past its due time (`busy_until`): it
        would be finished only then, so finishing it now costs at most that second finish, should
        a line of it still come in its grace."""
        waiting = [k for k, due in self.deadlines.items() if due - self.grace + self.settle <= now and k not in self.ranked_early]
        cheap = self.cheap(waiting)
        ripe = [k for k in waiting if self.complete(k, pending) or (cheap and self.midway(k) <= now)]
        if ripe:
            busy_until = now + self.cost(ripe)
            ripe += [k for k in waiting if k not in ripe and self.deadlines[k] <= busy_until]
        return ripe

    def midway(self, key: Key) -> int:
        """Halfway through a window's grace: a window that is cheap to finish (`cheap`) is finished
        then even if a connection that sent to it has not passed it yet."""
        return self.deadlines[key] - self.grace // 2

    def cheap(self, keys: list[Key]) -> bool:
        """Whether finishing these windows, at the cost measured on earlier ones, takes less than half
        the grace. Finishing them before every sender has passed them costs at most a second finish
        at their due time should a line of theirs still come (what they would cost then anyway);
        for large windows, which take longer than the grace, waiting for the senders is cheaper."""
        return self.cost(keys) < self.grace // 2

    def cost(self, keys: list[Key]) -> float:
        """How long finishing these windows takes (ns), at the cost per line measured on earlier ones."""
        return sum(self.buffer.open[k].lines for k in keys if k in self.buffer.open) * self.finishing.ns_per_line

    def complete(self, key: Key, pending: list = ()) -> bool:
        """Whether every line its connections sent to a window has arrived, as far as their order
        tells: each has passed it (`Origin.passed`, or a line of a later window among its frames
        `pending`, which arrived after its lines of this one) or closed with nothing left to absorb.
        What arrived is absorbed before the window is finished (`holds`). A line that still comes
        later (one sent out of order) is a straggler: the window finishes again."""
        return all(o.passed.get(key[0], key[1]) > key[1] or (o.closed and o.absorbed >= o.received)
                   or self._passes(o, key, pending) for o in self.senders.get(key, ()))

    def _passes(self, origin: Origin, key: Key, pending: list) -> bool:
        """Whether a frame of `origin` that arrived but is not absorbed yet holds a line of a later
        window of the same character (read as the landing reads it)."""
        now = self.clock()
        for o, _, lines in reversed(pending):  # its newest lines first: the likeliest to have passed
            if o is origin:
                for line in reversed(lines):
                    if line.reason is not None:
                        continue
                    row = landing.landing_row(line.text, now, self.rules.window_seconds, self.rules.timezone)
                    if row["character_id"] == key[0] and row["window_ns"] is not None and row["window_ns"] > key[1]:
                        return True
        return False

    def holds_due(self, items: list, now: int) -> bool:
        """Whether frames not yet absorbed hold a line of a window now due and not out yet (read as the
        landing reads it); a line of a window already out is late."""
        return self.holds(items, {k for k, end in self.deadlines.items() if end <= now and not self.finishing.pushed(k)})

    def holds(self, items: list, due: set[Key]) -> bool:
        """Whether frames not yet absorbed hold a line of one of these windows (read as the landing reads it)."""
        now = self.clock()
        for _, _, lines in items:
            for line in lines:
                if line.reason is not None:
                    continue
                row = landing.landing_row(line.text, now, self.rules.window_seconds, self.rules.timezone)
                if (row["character_id"], row["window_ns"]) in due:
                    return True
        return False
