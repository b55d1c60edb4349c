{#
    The queryParams operators rolemem understands, as a SQL list literal. Validation
    (int_character_config_problems) and evaluation (evaluate_conditions) both use it.
#}
{% macro query_param_operators() -%}
    ('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'contains')
{%- endmacro %}
