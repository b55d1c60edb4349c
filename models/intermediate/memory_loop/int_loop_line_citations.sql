-- Per observed save x character: each memory of the character citing a line of the current
-- chain (its source lines, memory_event_line), and whether it shows there: its last line is
-- on the chain (so are all its lines, the last one's ancestors) and its batch is not a
-- replacement hidden there. A memory whose last line is not on the chain was cut off it.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

event_lines as (
    select * from {{ ref('stg_app__memory_event_lines') }}
),

events as (
    select * from {{ ref('stg_app__memory_events') }}
),

hidden_batches as (
    select * from {{ ref('int_loop_hidden_batches') }}
),

final as (
    select
        observations.save_id,
        observations.target_key,
        turns.line_id,
        turns.line_position,
        events.event_id,
        events.last_line_id,
        events.batch_key,
        on_chain.line_id is not null as is_last_line_on_chain,
        on_chain.line_id is not null and hidden_batches.batch_key is null as is_shown
    from observations
    inner join turns
        on turns.save_id = observations.save_id
    inner join event_lines
        on
            event_lines.line_id = turns.line_id
            and event_lines.target_key = observations.target_key
    inner join events
        on events.event_id = event_lines.event_id
    left join turns as on_chain
        on on_chain.save_id = observations.save_id and on_chain.line_id = events.last_line_id
    left join hidden_batches
        on
            hidden_batches.save_id = observations.save_id
            and hidden_batches.batch_key = events.batch_key
)

select * from final
