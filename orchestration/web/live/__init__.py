"""The live console: chat in over `/ws/ingest`, finished windows out over `/ws/windows`, the page at `/live`."""


def routes(config) -> list:
    return []
