{#
    One query's scored candidates into the recall log, bound as one list per column (the
    event's scope read from the event).
#}
{% macro log_recalls(columns) -%}
    insert into memory_recall_log (
        query_id, queried_at, agent_id, user_id, item_type, item_id, scope, bm25_score,
        keyword_score, dense_score, recency_score, profile_score, score, is_selected
    )
    select
        $query_id as query_id,
        $now as queried_at,
        $agent_id as agent_id,
        $user_id as user_id,
        'event' as item_type,
        candidates.event_id as item_id,
        events.scope,
        candidates.bm25_score,
        candidates.keyword_score,
        candidates.dense_score,
        candidates.recency_score,
        candidates.profile_score,
        candidates.score,
        candidates.is_selected
    from (
        select
            {%- for name, kind in columns %}
            unnest(cast(${{ name }} as {{ kind }}[])) as {{ name }}
            {{- ',' if not loop.last else '' }}
            {%- endfor %}
    ) as candidates
    inner join memory_event as events on candidates.event_id = events.id
{%- endmacro %}
