{#
    An event's line in the dynamic memory text (the overview timeline's and the recalled
    events'): {时间}{地点}:{事件}. One rule for the recall's text (memory_prompt_texts) and
    the turn's, rebuilt after a prompt budget's cuts (memory_prompt_budget_cuts).
#}
{% macro memory_event_line(time_text, place, description) -%}
    {{ time_text }} || coalesce({{ place }}, '') || ':' || {{ description }}
{%- endmacro %}
