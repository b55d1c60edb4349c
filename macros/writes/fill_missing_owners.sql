{#
    The player (`user_id`) of rows written without one, copied from the row that owns them:
    a line's from its save, an event vector's from its event (rows written before the column
    existed, or by a game that writes its own lines). Rows whose owner has no player (an
    ownerless save, an official event) stay null. `bound_keys`: only the rows whose `key` is
    in $keys (the saves a history refresh rebuilt).
#}
{% macro fill_missing_owners(relation, key, owners, bound_keys=false) -%}
    update {{ relation }}
    set user_id = owners.user_id
    from {{ owners }} as owners
    where
        owners.id = {{ relation }}.{{ key }}
        and {{ relation }}.user_id is null
        and owners.user_id is not null
        {%- if bound_keys %}
        and list_contains(cast($keys as bigint[]), {{ relation }}.{{ key }})
        {%- endif %}
{%- endmacro %}
