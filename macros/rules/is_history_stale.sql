{#
    Whether a save's write-time history (its row `tips` of int_save_history_tips, null when
    none) is stale against its row `saves` of the save table: none built yet, its tip moved,
    or its player renamed (the stored messages name the player by the save's name).
#}
{% macro is_history_stale(tips, saves) -%}
    (
        {{ tips }}.save_id is null
        or {{ tips }}.tip_line_id is distinct from {{ saves }}.last_message_id
        or {{ tips }}.user_name is distinct from {{ saves }}.user_name
    )
{%- endmacro %}
