{#
    The overview timeline's pick: each query's newest timeline_size events of the player it
    can see (macro is_event_in_scope), newest first (created_at, then event_id), ranked from 1.
    DuckDB ranks the player's events in one window. PostgreSQL reads them per query from the
    table's (agent_id, scope, user_id, created_at, id) index, newest first, and stops at
    timeline_size (a lateral LIMIT, which DuckDB does not allow): no sort of every event.
    `hidden_batches` none: the players have no replacement batch.
#}
{% macro newest_events_per_query(
    queries, events, events_table, query_chains, hidden_batches
) -%}
    {#- dbt on a Citus coordinator ranks the gathered copy (`events`) in one window: Citus
        cannot push a lateral LIMIT per query down to the sharded table -#}
    {%- if execute is defined and is_citus_build() -%}
        {{- default__newest_events_per_query(
            queries, events, events_table, query_chains, hidden_batches
        ) -}}
    {%- else -%}
        {{- adapter.dispatch('newest_events_per_query', 'rolemem')(
            queries, events, events_table, query_chains, hidden_batches
        ) -}}
    {%- endif -%}
{%- endmacro %}

{% macro default__newest_events_per_query(
    queries, events, events_table, query_chains, hidden_batches
) -%}
    select query_id, event_id, timeline_rank
    from (
        select
            queries.query_id,
            events.event_id,
            queries.timeline_size,
            row_number() over (
                partition by queries.query_id
                order by events.created_at desc, events.event_id desc
            ) as timeline_rank
        from {{ events }} as events
        inner join {{ queries }} as queries
            on
                events.agent_id = queries.agent_id
                and events.user_id = queries.user_id
                and events.scope = 'user'
        {{ event_scope_joins(
            'queries.query_id', query_chains=query_chains, hidden_batches=hidden_batches
        ) | indent(4) }}
        where {{ is_event_in_scope(
            'events',
            'queries',
            hidden_batch_key='hidden_batches.batch_key' if hidden_batches else none
        ) }}
    ) as ranked
    -- a filter after the window, not QUALIFY: PostgreSQL has none
    where timeline_rank <= timeline_size
{%- endmacro %}

{% macro postgres__newest_events_per_query(
    queries, events, events_table, query_chains, hidden_batches
) -%}
    {#- the chain test is a lookup, not a join: a join would read every event before the
        limit -#}
    {%- set chain_line_id -%}
        (
            select max(query_chains.line_id)
            from {{ query_chains }} as query_chains
            where
                query_chains.query_id = queries.query_id
                and query_chains.line_id = events.last_line_id
        )
    {%- endset %}
    {%- set root_line_id_on_chain -%}
        (
            select max(tree_roots.line_id)
            from {{ query_chains }} as tree_roots
            where
                tree_roots.query_id = queries.query_id
                and tree_roots.line_id = events.root_line_id
        )
    {%- endset %}
    {%- set hidden_batch_key -%}
        {%- if hidden_batches %}
            (
                select max(hidden_batches.batch_key)
                from {{ hidden_batches }} as hidden_batches
                where
                    hidden_batches.query_id = queries.query_id
                    and hidden_batches.batch_key = events.batch_key
            )
        {%- endif %}
    {%- endset %}
    select queries.query_id, newest.event_id, newest.timeline_rank
    from {{ queries }} as queries
    cross join lateral (
        select
            events.id as event_id,
            row_number() over (order by events.created_at desc, events.id desc) as timeline_rank
        from {{ events_table }} as events
        where
            events.agent_id = queries.agent_id
            and events.user_id = queries.user_id
            and events.scope = 'user'
            and {{ is_event_in_scope(
                'events', 'queries', chain_line_id, root_line_id_on_chain, hidden_batch_key
            ) }}
        order by events.created_at desc, events.id desc
        limit greatest(queries.timeline_size, 0)
    ) as newest
{%- endmacro %}
