{#
    The fork points a walk of $save_ids can cross: those of the saves and the saves they were
    forked from ($lineage_ids), not every save's (a scan of the game's whole `save` table). On
    Citus read on the shard of the saves' player $save_user_id.
#}
{% macro lineage_fork_points() -%}
    select id as save_id, forked_from_line_id from save
    where
        forked_from_line_id is not null
        and list_contains(cast($lineage_ids as bigint[]), id)
        and {{ player_filter('user_id', 'save_user_id') }}
{%- endmacro %}
