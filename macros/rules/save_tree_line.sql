{#
    Line $id of a save's tree as a regenerate or a reload reads it (its parent, speaker and
    scene). On Citus the read stays on the shard of the player $user_id.
#}
{% macro save_tree_line() -%}
    select
        line.id,
        line.parent_line_id,
        line.attribute,
        line.role_id,
        line.script_role_id,
        line.display_name,
        line.scene
    from line
    where line.id = $id and {{ player_filter('line.user_id') }}
{%- endmacro %}
