{#
    Whether a save only gained lines at the end since its history was built (DuckDB's
    write-time tables): the walk of its new lines (temporary table `walk`) joins the recorded
    tip: every step in the save $save_id, no line twice, and the deepest step's parent is the
    tip the save's rows were built for (whole). One row when the append applies (none when
    the save is rebuilt instead): the recorded and the new line counts; whether the first new
    line lacks its player (the game wrote it: the save's unowned lines are filled then);
    whether the chain says who was present, at its recorded tip (what a chain row holds is
    inherited: a tip that says nothing means no line before it did) or on a new line, so the
    append plans the presence rule only then; and, where the store has facts (`has_facts`),
    whether a new line states one (the save's player's: an index seek; a count, as an exists
    plans about 0.7 ms more).
#}
{% macro appended_lines_walked(walk, has_facts) -%}
    with walked as (
        select
            count(*) > 0
            and count(distinct walk.line_id) = count(*)
            and bool_and(walk.line_save_id = walk.save_id) as is_one_run,
            -- the deepest line's parent even when null (arg_max would take the next line's)
            arg_max_null(lines.parent_line_id, walk.depth) as first_parent_line_id,
            arg_max(lines.user_id is null, walk.depth) as is_first_unowned,
            bool_or(
                lines.present_role_ids is not null or lines.present_script_role_ids is not null
            ) as says_presence,
            count(*) as line_count
        from {{ walk }} as walk
        inner join line as lines on lines.id = walk.line_id
    )

    select
        recorded.line_count as recorded_line_count,
        walked.line_count as new_line_count,
        walked.is_first_unowned,
        tip.present_role_ids is not null
        or tip.present_script_role_ids is not null
        or walked.says_presence as says_presence,
        {% if has_facts -%}
            (
                select count(*) from memory_fact as facts
                where
                    facts.user_id = (
                        select owners.user_id from save as owners where owners.id = $save_id
                    )
                    and facts.line_id in (select stated.line_id from {{ walk }} as stated)
            ) > 0
        {%- else -%}
            false
        {%- endif %} as states_fact
    from walked
    inner join save as saves on saves.id = $save_id
    inner join int_save_history_tips as recorded
        on
            recorded.save_id = $save_id
            and recorded.chain_problem is null
            and recorded.tip_line_id is not null
            -- a renamed player changes every stored message: the save is rebuilt whole
            and recorded.user_name is not distinct from saves.user_name
    left join main.int_lines_chained_to_root as tip
        on tip.save_id = $save_id and tip.line_position = recorded.line_count - 1
    where walked.is_one_run and walked.first_parent_line_id = recorded.tip_line_id
{%- endmacro %}
