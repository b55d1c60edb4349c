{#
    A save's recorded history grown by lines at its end: its tip is the save's, its length
    the new one.
#}
{% macro extend_history_tip() -%}
    update int_save_history_tips
    set
        tip_line_id = (
            select save.last_message_id
            from save
            where save.id = $save_id
        ),
        line_count = $line_count
    where save_id = $save_id
{%- endmacro %}
