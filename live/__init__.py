"""The near-real-time path for live_pick: landing table, replayer, sensor, window job.

Kept apart from the daily chain and light to import: a live run starts in a fresh process
for every window batch, so nothing here pulls in Great Expectations or report code.
"""
