"""Real broadcast chat into the live service: `verdicts listen PLATFORM CHANNEL --character CH-…`.

- `chzzk`, `youtube`, `twitch`: one module per platform, each a `Source` that holds one connection
  and reads the platform's messages into `line.Message`s (docs/feeds.md: what each one needs);
- `line`: the platform-neutral message and the `live_chat` line made from it; `question`: is_question
  from the body; `rates` and `donation_rates.yaml`: donations in won;
- `loop`: the feed loop every platform shares (reconnect with backoff and jitter, redeliveries
  counted apart, the ingest client that keeps lines until acknowledged); `counts`: what it counts;
- `listen`: the command.
"""
