"""Data-quality expectations of the normalised persona tables (turned into a GX suite by the
Dagster layer). The row gates already enforce them; the suite is the independent second look."""

EXPECTATIONS: dict[str, list[tuple[str, dict]]] = {
    "profiles": [
        *[("expect_column_values_to_not_be_null", {"column": c}) for c in ("profile_no", "character_code", "character_name")],
        ("expect_column_values_to_be_unique", {"column": "profile_no"}),
        ("expect_column_values_to_be_unique", {"column": "character_code"}),
        ("expect_column_values_to_be_between", {"column": "age", "min_value": 0, "max_value": 120}),
    ],
    "turns": [
        *[("expect_column_values_to_not_be_null", {"column": c})
          for c in ("turn_no", "character_code_raw", "prompt_ver", "created_at", "user_text")],
        ("expect_column_values_to_be_unique", {"column": "turn_no"}),
        ("expect_column_values_to_be_between", {"column": "stated_age", "min_value": 0, "max_value": 120}),
    ],
}
