{#
    Every loaded entry as a recall answered in Python reads it (character_memory.recall_rows),
    its keywords joined as explain joins them.
#}
{% macro loaded_recall_entries() -%}
    select
        character_id,
        entry_key,
        entry_kind,
        group_name,
        group_order,
        entry_ordinal,
        event_date,
        content,
        strength,
        is_constant,
        sticky_turns,
        array_to_string({{ json_text_list('keywords') }}, '、') as keywords_text,
        array_to_string({{ json_text_list('secondary_keywords') }}, '、') as secondary_text,
        secondary_logic
    from int_character_entries_unioned
    order by entry_key
{%- endmacro %}
