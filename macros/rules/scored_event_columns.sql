{#
    The columns every scored event carries from its candidate and signal rows: what
    int_memory_events_scored passes on and int_memory_events_selected passes through, named
    (PostgreSQL has no `* exclude`) in one place so the two lists cannot drift apart. Renders
    a comma-separated list for a select at the usual 8-space indent.
#}
{% macro scored_event_columns() -%}
{%- set columns = [
    'query_id', 'event_id', 'bm25_raw', 'word_tier', 'cosine', 'context_cosine',
    'long_context_cosine', 'is_in_time_window', 'has_time_window', 'has_query_in_description',
    'importance', 'feedback', 'recall_count', 'created_at', 'last_recalled_at', 'keyword_score',
    'dense_score', 'context_score', 'long_context_score', 'dense_z', 'time_score',
    'time_answer_score',
    'recency_score', 'use_count_score', 'recent_use_score', 'is_in_future', 'has_evidence',
    'bm25_score', 'relevance_score',
] -%}
{{ columns | join(',\n        ') }}
{%- endmacro %}
