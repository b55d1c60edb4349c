{#
    A save point reloaded: the tip moves to a line of the save's tree, the fork point to where
    the new chain leaves the save's own lines.
#}
{% macro reload_save_point() -%}
    update save
    set
        last_message_id = $tip,
        forked_from_line_id = $fork
    where id = $id and {{ player_filter('user_id') }}
{%- endmacro %}
