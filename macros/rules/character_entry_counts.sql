{#
    Per character of the loaded config, how many entries it has of each kind.
#}
{% macro character_entry_counts() -%}
    select character_id, entry_kind, count(*) as entry_count
    from int_character_entries_unioned
    group by character_id, entry_kind
    order by character_id, entry_kind
{%- endmacro %}
