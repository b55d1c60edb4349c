-- The lines each query's save sees an entity came from: those of its visible mentions
-- (int_memory_entity_mentions_seen), what the knowledge page and the turn's trace show of a
-- player's entity, as an event's source lines.
with

seen as (
    select * from {{ ref('int_memory_entity_mentions_seen') }}
),

-- one row per visible mention x line it came from (one added by hand has none)
mention_lines as (
    select
        query_id,
        entity_id,
        save_id,
        last_line_id,
        cast(unnest({{ json_text_list('line_ids_json') }}) as bigint) as line_id
    from seen
),

-- a line's id is larger than its ancestors' (ids follow writing), so the deepest line of a
-- chain is its largest id, and off the chain the newest
final as (
    select
        query_id,
        entity_id,
        array_agg(distinct line_id order by line_id) as line_ids,
        min(line_id) as first_line_id,
        max(last_line_id) as last_line_id,
        {{ arg_max('save_id', 'last_line_id') }} as save_id
    from mention_lines
    group by query_id, entity_id
)

select * from final
