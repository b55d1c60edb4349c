-- Every line of a save's history with the turn it belongs to. A turn starts at a player line
-- that does not follow another player line and runs up to the next such line; lines before the
-- first player line (system prompt, opening narration) are turn 0, never extracted. A line
-- stored without a scene is in the scene of the nearest line before it that has one.
with

history as (
    select * from {{ ref('int_lines_chained_to_root') }}
),

marked as (
    select
        save_id,
        line_position,
        line_id,
        attribute,
        role_id,
        script_role_id,
        present_role_ids,
        present_script_role_ids,
        attribute = 'user'
        and coalesce(lag(attribute) over by_position <> 'user', true) as is_turn_start,
        {{ last_non_null('scene', 'line_position', 'save_id') }} as scene
    from history
    window by_position as (partition by save_id order by line_position)
),

final as (
    select
        save_id,
        line_position,
        line_id,
        attribute,
        role_id,
        script_role_id,
        present_role_ids,
        present_script_role_ids,
        is_turn_start,
        sum(case when is_turn_start then 1 else 0 end) over (
            partition by save_id order by line_position
            rows between unbounded preceding and current row
        ) as turn_number,
        scene
    from marked
)

select * from final
