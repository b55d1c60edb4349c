{#
    An aggregate of objects, as the Python wrapper reads them (a list of dicts): DuckDB lists of
    structs, PostgreSQL json arrays (psycopg reads json as lists and dicts). `fields` is a list
    of (name, expression) pairs.
#}
{% macro list_of_objects(fields, order_by) -%}
    {{- adapter.dispatch('list_of_objects', 'rolemem')(fields, order_by) -}}
{%- endmacro %}

{% macro duckdb__list_of_objects(fields, order_by) -%}
    list(
        struct_pack({% for name, expression in fields %}{{ name }} := {{ expression }}
        {%- if not loop.last %}, {% endif %}{% endfor %})
        order by {{ order_by }}
    )
{%- endmacro %}

{% macro postgres__list_of_objects(fields, order_by) -%}
    json_agg(
        json_build_object({% for name, expression in fields %}'{{ name }}', {{ expression }}
        {%- if not loop.last %}, {% endif %}{% endfor %})
        order by {{ order_by }}
    )
{%- endmacro %}

{% macro list_of_rows(relation, order_by) -%}
    {#- every column of `relation`'s rows, one object per row -#}
    {{- adapter.dispatch('list_of_rows', 'rolemem')(relation, order_by) -}}
{%- endmacro %}

{% macro duckdb__list_of_rows(relation, order_by) -%}
    list({{ relation }} order by {{ order_by }})
{%- endmacro %}

{% macro postgres__list_of_rows(relation, order_by) -%}
    json_agg({{ relation }} order by {{ order_by }})
{%- endmacro %}

{% macro empty_list_of_objects() -%}
    {{- adapter.dispatch('empty_list_of_objects', 'rolemem')() -}}
{%- endmacro %}

{% macro duckdb__empty_list_of_objects() -%}
    []
{%- endmacro %}

{% macro postgres__empty_list_of_objects() -%}
    cast('[]' as json)
{%- endmacro %}
