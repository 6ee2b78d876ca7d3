"""The persona codes, used verbatim in code, schema, reports and UI."""

CONSISTENT = "consistent"
AGE_CONFLICT = "age_conflict"
JOB_CONFLICT = "job_conflict"
FORBIDDEN_TOPIC = "forbidden_topic"
REPLY_EMPTY = "reply_empty"
PROFILE_UNMAPPED = "profile_unmapped"

ORDER = (CONSISTENT, AGE_CONFLICT, JOB_CONFLICT, FORBIDDEN_TOPIC, REPLY_EMPTY, PROFILE_UNMAPPED)
RULE_ORDER = (PROFILE_UNMAPPED, REPLY_EMPTY, FORBIDDEN_TOPIC, AGE_CONFLICT, JOB_CONFLICT, CONSISTENT)
"""First match wins, in this order."""

EXCLUDED = (REPLY_EMPTY, PROFILE_UNMAPPED)
"""Turns shown with their reason but left out of the judged denominator."""

INCONSISTENT = (AGE_CONFLICT, JOB_CONFLICT, FORBIDDEN_TOPIC)
