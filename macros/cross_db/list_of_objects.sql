{#
    An aggregate of objects, as the Python wrapper reads them (a list of dicts): DuckDB lists of
    structs, PostgreSQL json arrays (psycopg reads json as lists and dicts). `fields` is a list
    of (name, expression) pairs.
#}
{% macro list_of_objects(fields, order_by) -%}
    {{- adapter.dispatch('list_of_objects', 'rolemem')(fields, order_by) -}}
{%- endmacro %}

{% macro default__list_of_objects(fields, order_by) -%}
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
