{#
    Per character of the loaded config, the keys of its entries as one list.
#}
{% macro character_entry_keys() -%}
    select character_id, list(entry_key) as entry_keys
    from int_character_entries_unioned
    group by character_id
{%- endmacro %}
