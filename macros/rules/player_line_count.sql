{#
    How many lines a walk of a save's tree may visit: its step budget (on Citus, the lines of
    the player $user_id).
#}
{% macro player_line_count() -%}
    select count(*) from line where {{ player_filter('line.user_id') }}
{%- endmacro %}
