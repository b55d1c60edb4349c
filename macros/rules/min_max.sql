{#
    An expression scaled to 0-1 over a window (per query: the signal's min-max), null when
    the window holds one value only.
#}
{% macro min_max(expression, window) -%}
    ({{ expression }} - min({{ expression }}) over {{ window }})
    / nullif(max({{ expression }}) over {{ window }} - min({{ expression }}) over {{ window }}, 0)
{%- endmacro %}
