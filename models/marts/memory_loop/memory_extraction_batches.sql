-- One row per extraction batch, per save x character, with whether its slice is still on the
-- save's current branch (its events are recalled for that save only while it is).
with

batches as (
    select * from {{ ref('stg_app__memory_extraction_batches') }}
),

turns as (
    select * from {{ ref('int_lines_numbered_into_turns') }}
),

final as (
    select
        batches.batch_key,
        batches.save_id,
        batches.target_key,
        batches.user_id,
        batches.agent_id,
        batches.reason,
        batches.scene,
        batches.llm_model,
        batches.first_line_id,
        batches.last_line_id,
        batches.turn_count,
        batches.event_count,
        batches.entity_count,
        turns.line_id is not null as is_on_current_branch,
        batches.extracted_at
    from batches
    left join turns
        on turns.save_id = batches.save_id and turns.line_id = batches.last_line_id
)

select * from final
