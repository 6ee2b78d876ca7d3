"""The project's web front (`verdicts serve`): one ASGI application for the live console and the
admin pages. Each area contributes its own routes; `app.create_app` assembles them."""
