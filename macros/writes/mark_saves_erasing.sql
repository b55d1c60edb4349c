{#
    The saves $save_ids marked as being erased (save.erasing): from the erasure's first step
    on they read as gone, while DuckDB deletes their lines over several transactions. On
    Citus the saves are the player $user_id's (one shard).
#}
{% macro mark_saves_erasing() -%}
    update save set erasing = true
    where
        id in (select unnest(cast($save_ids as bigint[])))
        and {{ player_filter('save.user_id') }}
{%- endmacro %}
