{#
    The saves among $save_ids (null: every save) whose write-time history is stale (macro
    is_history_stale), in id order, each with whether it has a player (only then are lines
    the game wrote without one filled). DuckDB's write-time tables only.
#}
{% macro stale_saves() -%}
    select saves.id, saves.user_id is not null as is_owned
    from save as saves
    left join int_save_history_tips as tips
        on tips.save_id = saves.id
    where
        ($save_ids is null or list_contains(cast($save_ids as bigint[]), saves.id))
        and {{ is_history_stale('tips', 'saves') }}
    order by saves.id
{%- endmacro %}
