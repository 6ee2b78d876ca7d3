"""Sheet tuning in the web front: each closed broadcast's suggestions, applied (after a
confirmation) or rejected with a reason, and every character's sheet history (`/suggestions`).

- `page`: the server-rendered page (all text escaped) and its static script and style;
- `actions`: the two JSON POST endpoints, which call the same functions as the
  `apply_sheet_suggestion` job and `verdicts apply`.
"""

from __future__ import annotations

from starlette.routing import Route


def routes(config) -> list:
    from web.suggestions import actions, page

    return [
        Route("/suggestions", page.page(config)),
        Route("/suggestions/static/{name}", page.static_file),
        Route("/suggestions/apply", actions.apply(config), methods=["POST"]),
        Route("/suggestions/reject", actions.reject(config), methods=["POST"]),
    ]
