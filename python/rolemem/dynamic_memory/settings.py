"""The seeds dynamic memory reads and the scoring profile's settings (names and SQL types)."""

from __future__ import annotations

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


PROFILE_NAMES = (
    "bm25_weight",
    "keyword_weight",
    "dense_weight",
    "relevance_share",
    "importance_weight",
    "recency_weight",
    "use_count_weight",
    "recent_use_penalty_weight",
    "content_match_weight",
    "feedback_weight",
    "recency_half_life_days",
    "recent_use_hours",
    "bm25_k1",
    "bm25_b",
    "expanded_word_weight",
    "tier_exact_tag",
    "tier_partial_tag",
    "tier_exact_content",
    "tier_partial_content",
    "recall_strength_bonus",
    "entity_limit",
    "timeline_size",
    "dense_candidates",
    "time_weight",
    "dense_gate_sigma",
    "fusion",
    "rrf_k",
    "context_dense_weight",
    "time_answer_weight",
)


_SETTING_TYPES = {
    **{
        name: "integer"
        for name in (
            "recall_strength_bonus",
            "entity_limit",
            "timeline_size",
            "dense_candidates",
            "expand_strategy",
            "max_expanded_words",
        )
    },
    "fusion": "varchar",
}
