-- Per observed save x character: what cites each line of its current chain for the character,
-- and whether it shows there. A memory (is_memory) cites its source lines (memory_event_line,
-- an entity mention's line_ids: memory_entity_mention);
-- a replacement batch (not is_memory) cites the lines it sent again (memory_batch_line). It
-- shows when its last line is on the chain (so are all its lines, the last one's ancestors)
-- and its batch is not a replacement hidden there; a memory whose last line is not on the
-- chain was cut off it.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

chains as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

event_lines as (
    select * from {{ ref('stg_app__memory_event_lines') }}
),

mentions as (
    select * from {{ ref('stg_app__memory_entity_mentions') }}
),

batch_lines as (
    select * from {{ ref('stg_app__memory_batch_lines') }}
),

hidden_batches as (
    select * from {{ ref('int_loop_hidden_batches') }}
),

-- both tables carry the citer's batch and last line: no join to the events or batches
sources as (
    select
        line_id,
        target_key,
        event_id,
        last_line_id,
        batch_key,
        true as is_memory
    from event_lines
    union all
    -- an extracted entity mention's lines (one added by hand has none, and no character)
    select
        cast(unnest({{ json_text_list('line_ids_json') }}) as bigint) as line_id,
        target_key,
        cast(null as bigint) as event_id,
        last_line_id,
        batch_key,
        true as is_memory
    from mentions
    where target_key is not null
    union all
    select
        line_id,
        target_key,
        cast(null as bigint) as event_id,
        last_line_id,
        batch_key,
        false as is_memory
    from batch_lines
    where relation = 'sent'
),

final as (
    select
        observations.save_id,
        observations.target_key,
        chains.line_id,
        chains.line_position,
        sources.event_id,
        sources.last_line_id,
        sources.batch_key,
        sources.is_memory,
        on_chain.line_id is not null as is_last_line_on_chain,
        on_chain.line_id is not null and hidden_batches.batch_key is null as is_shown
    from observations
    inner join chains
        on chains.save_id = observations.save_id
    inner join sources
        on sources.line_id = chains.line_id and sources.target_key = observations.target_key
    left join chains as on_chain
        on on_chain.save_id = observations.save_id and on_chain.line_id = sources.last_line_id
    left join hidden_batches
        on
            hidden_batches.save_id = observations.save_id
            and hidden_batches.batch_key = sources.batch_key
)

select * from final
