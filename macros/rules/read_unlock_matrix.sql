{#
    The unlock matrix of the character $character_id (mart character_unlock_matrix): its rows
    in entry and level order, for the console.
#}
{% macro read_unlock_matrix() -%}
    select
        entry_key,
        entry_kind,
        group_name,
        content,
        other_fields,
        intimacy,
        exploration,
        is_unlocked,
        is_unlocked_by_levels
    from character_unlock_matrix
    where character_id = $character_id
    order by entry_kind, entry_key, intimacy, exploration
{%- endmacro %}
