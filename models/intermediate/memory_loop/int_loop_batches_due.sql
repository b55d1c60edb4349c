-- The extraction batches an observation makes due (dynamic-memory §四). A batch holds the
-- turns of one scene: the pending turns are cut into runs where their scene changes (a turn
-- stored without a scene is in the scene the loop saw last, else the observed one), and every
-- run but the newest is due at once (a scene change), in batches of at most
-- context_max_turns: exactly the turns before the change, whenever the observation comes. The
-- newest run goes the same way when the observed scene is another; else, once
-- extract_at_turns of its turns are pending, its oldest extract_turns go (repeated while the
-- rest still reach extract_at_turns). Replay turns (lines whose memories were cut off the
-- chain: model int_loop_line_coverage) make runs of their own, due at once as replacement
-- batches naming the memories they stand in for. A batch key names the slice (and for a
-- replacement what it replaces), so the same slice is one batch forever. With var loop_cuts
-- false (no cut on the chain: model int_loop_watermarks) there is no replay, and no citation is
-- planned.
{%- set cuts = var('loop_cuts', true) %}
with

observations as (
    select * from {{ ref('int_loop_observations') }}
),

pending as (
    select * from {{ ref('int_loop_pending_turns') }}
),

{% if cuts %}
    citations as (
        select * from {{ ref('int_loop_line_citations') }}
    ),
{% endif %}

scened as (
    select
        pending.save_id,
        pending.target_key,
        pending.pending_index,
        pending.first_line_id,
        pending.last_line_id,
        pending.first_line_position,
        pending.last_line_position,
        pending.new_line_count,
        pending.is_replay,
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

-- a run starts where a known scene follows another known one, and where replay turns start
-- or end
run_starts as (
    select
        *,
        case
            when coalesce(lag(scene) over by_turn <> scene, false) then 1
            when coalesce(lag(is_replay) over by_turn <> is_replay, false) then 1
            else 0
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
        has_later_run or coalesce(observed_scene <> run_scene, false) as is_scene_change,
        -- lines played before whose memories were cut (a run's turns all are, or none):
        -- due at once, as a replacement
        is_replay as is_replay_run
    from measured
),

batched as (
    select
        *,
        case
            when is_scene_change or is_replay_run
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
        or is_replay_run
        or (
            run_turns - extract_turns * run_batch_index >= extract_at_turns
            and extract_turns > 0
        )
),

grouped as (
    select
        save_id,
        target_key,
        cast(
            dense_rank() over (
                partition by save_id, target_key order by run_number, run_batch_index
            ) - 1 as bigint
        ) as batch_index,
        case
            when is_replay_run then 'replacement'
            when is_scene_change then 'scene_change'
            else 'window_full'
        end as reason,
        run_scene as scene,
        {{ arg_min('first_line_id', 'pending_index') }} as first_line_id,
        {{ arg_max('last_line_id', 'pending_index') }} as last_line_id,
        min(first_line_position) as first_line_position,
        max(last_line_position) as last_line_position,
        count(*) as turn_count,
        sum(new_line_count) as new_line_count
    from due
    group by
        save_id, target_key, run_number, run_batch_index, run_scene, is_scene_change,
        is_replay_run
),

{% if cuts %}
    -- what a replacement stands in for: the memories cut off the chain that cite its lines
    replaced as (
        select
            grouped.save_id,
            grouped.target_key,
            grouped.batch_index,
            array_agg(distinct citations.last_line_id order by citations.last_line_id)
                as replaced_line_ids,
            array_agg(distinct citations.batch_key order by citations.batch_key)
                as replaced_batch_keys,
            max(citations.last_line_id) as last_replaced_line_id
        from grouped
        inner join citations
            on
                citations.save_id = grouped.save_id
                and citations.target_key = grouped.target_key
                and citations.line_position between grouped.first_line_position
                and grouped.last_line_position
        where
            grouped.reason = 'replacement'
            and citations.is_memory
            and not citations.is_last_line_on_chain
        group by grouped.save_id, grouped.target_key, grouped.batch_index
    ),
{% endif %}

final as (
    select
        grouped.*,
        {% if cuts %}
            replaced.replaced_line_ids,
            replaced.replaced_batch_keys,
        {% else %}
            cast(null as bigint[]) as replaced_line_ids,
            cast(null as varchar[]) as replaced_batch_keys,
        {% endif %}
        -- the slice, and for a replacement what it replaces: the same slice replayed in
        -- another cut is another batch
        cast(grouped.save_id as varchar) || ':' || grouped.target_key
        || ':' || cast(grouped.first_line_id as varchar)
        || ':' || cast(grouped.last_line_id as varchar)
        {% if cuts %}
            || coalesce(':r' || cast(replaced.last_replaced_line_id as varchar), '')
        {% endif %} as batch_key
    from grouped
    {% if cuts %}
        left join replaced
            on
                replaced.save_id = grouped.save_id
                and replaced.target_key = grouped.target_key
                and replaced.batch_index = grouped.batch_index
    {% endif %}
)

select * from final
