-- One row per save x character: its extraction watermark, the turns waiting after it (the
-- context window) and how many batches are due now by the window rule.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

watermarks as (
    select * from {{ ref('int_loop_watermarks') }}
),

pending as (
    select * from {{ ref('int_loop_pending_turns') }}
),

due as (
    select * from {{ ref('int_loop_batches_due') }}
),

pending_counts as (
    select
        save_id,
        target_key,
        count(*) as pending_turns
    from pending
    group by save_id, target_key
),

due_counts as (
    select
        save_id,
        target_key,
        count(*) as batches_due
    from due
    group by save_id, target_key
),

final as (
    select
        observations.save_id,
        observations.target_key,
        observations.user_id,
        observations.agent_id,
        observations.last_scene,
        watermarks.watermark_line_id,
        coalesce(pending_counts.pending_turns, 0) as pending_turns,
        coalesce(due_counts.batches_due, 0) as batches_due
    from observations
    inner join watermarks
        on
            watermarks.save_id = observations.save_id
            and watermarks.target_key = observations.target_key
    left join pending_counts
        on
            pending_counts.save_id = observations.save_id
            and pending_counts.target_key = observations.target_key
    left join due_counts
        on
            due_counts.save_id = observations.save_id
            and due_counts.target_key = observations.target_key
)

select * from final
