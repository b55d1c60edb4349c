{#
    A page of save $save_id's current branch, newest first: the $limit lines (and one more,
    saying there are more) before chain position $before_position (null: up to the tip),
    each with its stored fields. On Citus the page's lines are read on the saves' player
    $save_user_id's shard, as the chain is (macro player_filter).
#}
{% macro save_branch_page() -%}
    select
        chain.line_position, chain.line_id, lines.parent_line_id, lines.save_id, chain.attribute,
        chain.content, chain.role_id, chain.script_role_id, chain.display_name,
        chain.original_emotion, lines.predicted_emotion, chain.tts_content, chain.action_content,
        lines.audio_file, chain.created_at, chain.present_role_ids, chain.present_script_role_ids
    from int_lines_chained_to_root as chain
    inner join line as lines
        on lines.id = chain.line_id and {{ player_filter('lines.user_id', 'save_user_id') }}
    where
        chain.save_id = $save_id
        and chain.line_position < coalesce($before_position, 9223372036854775807)
    order by chain.line_position desc
    limit $limit + 1
{%- endmacro %}
