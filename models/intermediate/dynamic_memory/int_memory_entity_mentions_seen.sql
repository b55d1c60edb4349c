-- The mentions of the player's entities each query's save may see (memory_entity_mention: an
-- entity row is one across saves, its mentions keep their lines), by the events' branch rule
-- (macro is_event_in_scope: lines on the chain, a replacement's only where its original is
-- cut away, another playthrough's with memory_scope 'player', one without a save
-- everywhere). Witnessing needs no test here: a mention, as an event, comes from lines its
-- character witnessed (extraction sends no other). Var recall_mention_lines false: no
-- mention of the batch's players came from lines (each was written by hand or before
-- mentions kept lines: no save), so each is in scope everywhere by the rule's first clause
-- and none of the chain's joins is planned; var recall_replacements false: no replacement
-- batch to hide (recall.py asks both).
{%- set lines = var('recall_mention_lines', true) %}
{%- set replacements = var('recall_replacements', true) %}
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

mentions as (
    select * from {{ ref('stg_app__memory_entity_mentions') }}
),

{%- if lines %}

    query_chains as (
        select * from {{ ref('int_memory_query_chains') }}
    ),
    {%- if replacements %}

        hidden_batches as (
            select * from {{ ref('int_memory_query_hidden_batches') }}
        ),
    {%- endif %}
{%- endif %}

final as (
    select
        queries.query_id,
        mentions.mention_id,
        mentions.entity_id,
        mentions.description,
        mentions.line_ids_json,
        mentions.save_id,
        mentions.first_line_id,
        mentions.last_line_id,
        -- its last line's place on the chain; null off it (no save, another playthrough)
        {{ 'query_chains.line_position' if lines else 'cast(null as bigint)' }} as line_position
    from mentions
    inner join queries
        on
            mentions.agent_id = queries.agent_id
            and mentions.user_id = queries.user_id
    {%- if lines %}
        {{ event_scope_joins(
            'queries.query_id',
            'mentions',
            hidden_batches='hidden_batches' if replacements else none
        ) }}
        where {{ is_event_in_scope(
            'mentions',
            'queries',
            hidden_batch_key='hidden_batches.batch_key' if replacements else none
        ) }}
    {%- endif %}
)

select * from final
