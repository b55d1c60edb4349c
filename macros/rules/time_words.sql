{#
    Seed time_expressions, each with whether it is lowercase, as model
    int_memory_event_candidates reads them to find which candidates name a time.
#}
{% macro time_words() -%}
    select
        expression,
        expression = lower(expression) as is_lowercase
    from time_expressions
    where expression is not null
{%- endmacro %}
