{#
    Every character of save $save_id (int_memory_targets over the stored chain) with the
    first line and index of its last stored message, where the append rebuilds its messages
    from (the only one a later line can change); a character speaking for the first time has
    none and is built from the start. DuckDB's write-time tables only.
#}
{% macro resumed_message_targets() -%}
    select
        targets.* replace (
            last_messages.first_line_position as resume_line_position,
            last_messages.message_index as resume_message_index
        )
    from int_memory_targets as targets
    left join ( -- noqa: ST05
        select
            target_key,
            arg_max(first_line_position, message_index) as first_line_position,
            max(message_index) as message_index
        from main.memory_messages
        where save_id = $save_id
        group by target_key
    ) as last_messages
        on last_messages.target_key = targets.target_key
{%- endmacro %}
