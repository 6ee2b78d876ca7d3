"""Data-quality expectations of the normalised retry tables (turned into a GX suite by the
Dagster layer). The row gates already enforce them; the suite is the independent second look."""

EXPECTATIONS: dict[str, list[tuple[str, dict]]] = {
    "interaction_events": [
        *[("expect_column_values_to_not_be_null", {"column": c})
          for c in ("event_id", "session_id", "surface_key_raw", "input_text", "sent_at", "sent_at_ns", "surface_key")],
        ("expect_column_values_to_be_unique", {"column": "event_id"}),
        ("expect_column_value_lengths_to_be_between", {"column": "squashed", "min_value": 1}),
    ],
    "surface_catalog": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("surface_key", "surface_name")],
        ("expect_column_values_to_be_unique", {"column": "surface_key"}),
        ("expect_column_values_to_be_between", {"column": "default_baseline", "min_value": 0, "max_value": 1}),
    ],
}
