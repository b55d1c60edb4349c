{#
    A lone recall's reachable `events` (the player's and the official ones, unioned first so
    the branch rule and the chain's joins are planned once over both) with whether each is in
    the query's scope (is_event_in_scope) and what scoring reads; `chained`: the query has a
    save ($save_id), whose chain is joined (else no event's line is on one). The query's
    values the branch rule reads are one bound struct ($scope_query: a relation of them would
    cost each part of the union a cross product and two projections to plan). DuckDB only:
    the embedded store's recall.
#}
{% macro lone_query_scope(events, chained) -%}
    {%- set query -%}
        (cast($scope_query as struct(
            save_id bigint, memory_scope varchar, lineage_save_ids bigint[]
        )))
    {%- endset -%}
    {%- set chain -%}
        (
            select line_id from main.int_lines_chained_to_root
            where save_id = cast($save_id as bigint)
        )
    {%- endset -%}
    select
        events.id as event_id,
        events.token_count,
        events.created_at,
        {{ is_event_in_scope(
            'events',
            query,
            'query_chains.line_id' if chained else 'null',
            'tree_roots.line_id' if chained else 'null',
            none
        ) }} as is_in_scope,
        events.scope = 'user' as is_own,
        cast(events.importance as double) as importance,
        cast(events.feedback as double) as feedback,
        events.recall_count,
        events.last_recalled_at,
        events.revision,
        lower(cast($query_text as varchar)) as lowered_query,
        length(cast($query_text as varchar)) > 1 as is_long_query
    from ({{ events }}) as events
    {%- if chained %}
        left join {{ chain }} as query_chains on query_chains.line_id = events.last_line_id
        left join {{ chain }} as tree_roots on tree_roots.line_id = events.root_line_id
    {%- endif %}
{%- endmacro %}
