-- The extraction batches an observation makes due (dynamic-memory §四). Normally, once
-- extract_at_turns turns are pending, the oldest extract_turns go (repeated while the rest
-- still reach extract_at_turns); on a scene change every pending turn goes, in batches of at
-- most context_max_turns. A batch key names the slice, so the same slice is one batch forever.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

pending as (
    select * from {{ ref('int_loop_pending_turns') }}
),

counted as (
    select
        pending.*,
        count(*) over (partition by pending.save_id, pending.target_key) as pending_turns,
        observations.extract_at_turns,
        observations.extract_turns,
        observations.context_max_turns,
        coalesce(observations.scene <> observations.last_scene, false) as is_scene_change
    from pending
    inner join observations
        on
            observations.save_id = pending.save_id
            and observations.target_key = pending.target_key
),

assigned as (
    select
        *,
        case
            when is_scene_change
                then cast(floor((pending_index - 1) / greatest(context_max_turns, 1)) as bigint)
            else cast(floor((pending_index - 1) / greatest(extract_turns, 1)) as bigint)
        end as batch_index
    from counted
),

due as (
    select *
    from assigned
    where
        is_scene_change
        or (
            pending_turns - extract_turns * batch_index >= extract_at_turns
            and extract_turns > 0
        )
),

final as (
    select
        save_id,
        target_key,
        batch_index,
        case when any_value(is_scene_change) then 'scene_change' else 'window_full' end
            as reason,
        {{ arg_min('first_line_id', 'pending_index') }} as first_line_id,
        {{ arg_max('last_line_id', 'pending_index') }} as last_line_id,
        min(first_line_position) as first_line_position,
        max(last_line_position) as last_line_position,
        count(*) as turn_count,
        cast(save_id as varchar) || ':' || target_key || ':'
        || cast({{ arg_min('first_line_id', 'pending_index') }} as varchar) || ':'
        || cast({{ arg_max('last_line_id', 'pending_index') }} as varchar) as batch_key
    from due
    group by save_id, target_key, batch_index
)

select * from final
