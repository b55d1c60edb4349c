-- The extraction batches an observation makes due (dynamic-memory §四). A batch holds the
-- turns of one scene: the pending turns are cut into runs where their scene changes (a turn
-- stored without a scene is in the scene the loop saw last, else the observed one), and every
-- run but the newest is due at once (a scene change), in batches of at most
-- context_max_turns: exactly the turns before the change, whenever the observation comes. The
-- newest run goes the same way when the observed scene is another; else, once
-- extract_at_turns of its turns are pending, its oldest extract_turns go (repeated while the
-- rest still reach extract_at_turns). A batch key names the slice, so the same slice is one
-- batch forever.
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

pending as (
    select * from {{ ref('int_loop_pending_turns') }}
),

scened as (
    select
        pending.save_id,
        pending.target_key,
        pending.pending_index,
        pending.first_line_id,
        pending.last_line_id,
        pending.first_line_position,
        pending.last_line_position,
        observations.scene as observed_scene,
        observations.extract_at_turns,
        observations.extract_turns,
        observations.context_max_turns,
        coalesce(pending.scene, observations.last_scene, observations.scene) as scene
    from pending
    inner join observations
        on
            observations.save_id = pending.save_id
            and observations.target_key = pending.target_key
),

-- a run starts where a known scene follows another known one
run_starts as (
    select
        *,
        case
            when coalesce(lag(scene) over by_turn <> scene, false) then 1 else 0
        end as is_run_start
    from scened
    window by_turn as (partition by save_id, target_key order by pending_index)
),

runs as (
    select
        *,
        sum(is_run_start) over (
            by_turn rows between unbounded preceding and current row
        ) as run_number,
        -- a run starts after this turn's: its run is not the newest
        coalesce(
            sum(is_run_start) over (by_turn rows between 1 following and unbounded following),
            0
        ) > 0 as has_later_run
    from run_starts
    window by_turn as (partition by save_id, target_key order by pending_index)
),

measured as (
    select
        *,
        max(scene) over (by_run rows between unbounded preceding and unbounded following)
            as run_scene,
        row_number() over by_run as run_index,
        count(*) over (by_run rows between unbounded preceding and unbounded following)
            as run_turns
    from runs
    window by_run as (partition by save_id, target_key, run_number order by pending_index)
),

assigned as (
    select
        *,
        has_later_run or coalesce(observed_scene <> run_scene, false) as is_scene_change
    from measured
),

batched as (
    select
        *,
        case
            when is_scene_change
                then cast(floor((run_index - 1) / greatest(context_max_turns, 1)) as bigint)
            else cast(floor((run_index - 1) / greatest(extract_turns, 1)) as bigint)
        end as run_batch_index
    from assigned
),

due as (
    select *
    from batched
    where
        is_scene_change
        or (
            run_turns - extract_turns * run_batch_index >= extract_at_turns
            and extract_turns > 0
        )
),

final as (
    select
        save_id,
        target_key,
        cast(
            dense_rank() over (
                partition by save_id, target_key order by run_number, run_batch_index
            ) - 1 as bigint
        ) as batch_index,
        case when is_scene_change then 'scene_change' else 'window_full' end as reason,
        run_scene as scene,
        {{ arg_min('first_line_id', 'pending_index') }} as first_line_id,
        {{ arg_max('last_line_id', 'pending_index') }} as last_line_id,
        min(first_line_position) as first_line_position,
        max(last_line_position) as last_line_position,
        count(*) as turn_count,
        cast(save_id as varchar) || ':' || target_key || ':'
        || cast({{ arg_min('first_line_id', 'pending_index') }} as varchar) || ':'
        || cast({{ arg_max('last_line_id', 'pending_index') }} as varchar) as batch_key
    from due
    group by save_id, target_key, run_number, run_batch_index, run_scene, is_scene_change
)

select * from final
