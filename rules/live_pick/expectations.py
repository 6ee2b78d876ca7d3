"""Data-quality expectations of the normalised live_pick tables.

Written as plain data so this package stays free of Great Expectations; the Dagster layer
turns them into a GX suite. The row gates already enforce all of this, so in a healthy run
every expectation passes: the suite is the independent second look that proves it.
"""

EXPECTATIONS: dict[str, list[tuple[str, dict]]] = {
    "live_chat": [
        *[("expect_column_values_to_not_be_null", {"column": c})
          for c in ("msg_id", "character_id", "viewer_id", "sent_at", "sent_at_ns", "body", "donation_amount", "is_question")],
        ("expect_column_values_to_be_unique", {"column": "msg_id"}),
        ("expect_column_values_to_be_between", {"column": "donation_amount", "min_value": 0}),
        ("expect_column_values_to_be_in_set", {"column": "is_question", "value_set": [True, False]}),
    ],
    "character_sheet": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("character_id", "character_name", "reply_cooldown_sec")],
        ("expect_column_values_to_be_unique", {"column": "character_id"}),
        ("expect_column_values_to_be_between", {"column": "reply_cooldown_sec", "min_value": 0, "max_value": 900}),
    ],
    "viewer_relation": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("viewer_id", "nickname", "closeness_level")],
        ("expect_column_values_to_be_unique", {"column": "viewer_id"}),
        ("expect_column_values_to_be_between", {"column": "closeness_level", "min_value": 0, "max_value": 5}),
    ],
}
