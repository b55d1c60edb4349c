"""The seeds dynamic memory reads and the scoring profile's settings (names and SQL types)."""

from __future__ import annotations

from ..sql.seeds import seed_specs

SETTING_SEEDS = (
    "recall_stopwords",
    "association_words",
    "recall_limits",
    "memory_scoring_profile",
    "memory_loop_settings",
    "memory_strength_increments",
    "time_expressions",
    "memory_fact_attributes",
    "memory_fact_attribute_aliases",
    "memory_fact_past_words",
    "memory_time_question_words",
)


# the scoring profile's settings: seed memory_scoring_profile's columns, in its order
PROFILE_NAMES = tuple(seed_specs()["memory_scoring_profile"][1])

# the settings that are not doubles, typed as the seeds' YAML types them for dbt (the profile's
# and recall_limits')
_SETTING_TYPES = {
    name: kind.lower()
    for seed in ("memory_scoring_profile", "recall_limits")
    for name, kind in seed_specs()[seed][1].items()
    if kind in ("INTEGER", "VARCHAR")
}
# the settings a query binds once for its whole batch (model int_memory_queries), by SQL type
QUERY_SETTINGS = {
    "expand_strategy": "integer",
    "max_expanded_words": "integer",
    "filter_levels": "integer[]",
    **{name: _SETTING_TYPES.get(name, "double") for name in PROFILE_NAMES},
}
