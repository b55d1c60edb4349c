{#
    Every row of `relation` with its player (`user_id`) filled from the row that owns it,
    where it has none (a store written before the column: a line's from its save, an event
    vector's from its event), for copying a DuckDB store into a database sharded by player.
    DuckDB's `* replace`: it runs on the DuckDB store only.
#}
{% macro owners_filled(relation, key, owners) -%}
    select {{ relation }}.* replace (
        coalesce({{ relation }}.user_id, owners.user_id) as user_id
    )
    from {{ relation }}
    left join {{ owners }} as owners on {{ relation }}.{{ key }} = owners.id
{%- endmacro %}
