{#
    A table row as one JSON object (an archived memory keeps its whole row): DuckDB's to_json of
    the row; PostgreSQL builds the object from the columns, each cast as DuckDB writes it
    (timestamps as their text, where PostgreSQL's to_json writes ISO's T; single-precision
    numbers widened, as DuckDB prints their exact value).
#}
{% macro row_as_json(relation, columns) -%}
    {{- adapter.dispatch('row_as_json', 'rolemem')(relation, columns) -}}
{%- endmacro %}

{% macro default__row_as_json(relation, columns) -%}
    to_json({{ relation }})
{%- endmacro %}

{% macro postgres__row_as_json(relation, columns) -%}
    json_build_object(
        {%- for column, cast_to in columns %}
        '{{ column }}',
        {% if cast_to %}cast({{ relation }}.{{ column }} as {{ cast_to }}){% else -%}
            {{ relation }}.{{ column }}{% endif %}
        {%- if not loop.last %},{% endif %}
        {%- endfor %}
    )
{%- endmacro %}
