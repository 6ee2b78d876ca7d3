"""Data-quality expectations of the normalised handoff tables (turned into a GX suite by the
Dagster layer). The row gates already enforce them; the suite is the independent second look."""

EXPECTATIONS: dict[str, list[tuple[str, dict]]] = {
    "chat_messages": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("message_id", "room_id", "sender", "sent_at", "sent_at_ns")],
        ("expect_column_values_to_be_unique", {"column": "message_id"}),
        ("expect_column_values_to_be_in_set", {"column": "sender", "value_set": ["customer", "ai", "counselor", "system"]}),
    ],
    "rooms": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("room_id", "customer_id")],
        ("expect_column_values_to_be_unique", {"column": "room_id"}),
        ("expect_column_values_to_be_in_set", {"column": "closed_by", "value_set": ["ai", "counselor", "customer", "timeout"]}),
    ],
    "handoff_phrases": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("trigger_phrase", "first_reply_min")],
        ("expect_column_values_to_be_unique", {"column": "trigger_phrase"}),
        ("expect_column_values_to_be_between", {"column": "first_reply_min", "min_value": 1}),
    ],
    "help_articles": [
        ("expect_column_values_to_not_be_null", {"column": "article_id"}),
        ("expect_column_values_to_be_unique", {"column": "article_id"}),
    ],
}
