{#
    Keep the rows with a match in `relation`, written where a join goes (see anti_join,
    whose engine implementations filter_join it shares).
#}
{% macro semi_join(relation, condition) -%}
    {{- adapter.dispatch('filter_join', 'rolemem')(relation, condition, 'semi') -}}
{%- endmacro %}
