"""The admin pages: domains and days, boards and reports, items, uploads, manual checks, diffs."""


def routes(config) -> list:
    return []
