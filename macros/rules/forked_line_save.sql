{#
    The save of line $id, the line a fork starts from. On Citus the read stays on the shard of
    the player $user_id, where another player's line is not found.
#}
{% macro forked_line_save() -%}
    select save_id from line where id = $id and {{ player_filter('user_id') }}
{%- endmacro %}
