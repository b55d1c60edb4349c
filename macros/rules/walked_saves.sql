{#
    The saves $save_ids a walk reads (on Citus, of their player $save_user_id).
#}
{% macro walked_saves() -%}
    select * from save
    where
        list_contains(cast($save_ids as bigint[]), id)
        and {{ player_filter('user_id', 'save_user_id') }}
{%- endmacro %}
