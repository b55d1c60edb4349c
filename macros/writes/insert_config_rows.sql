{#
    Rows of a config table bound as one list per column (JSON as text), in SQL every engine
    reads: named columns, typed lists.
#}
{% macro insert_config_rows(table, columns) -%}
    insert into {{ table }} (
        {%- for name, kind in columns %}{{ name }}{{ ', ' if not loop.last else '' }}{% endfor -%}
    )
    select
        {%- for name, kind in columns %}
        {{ 'cast(' ~ name ~ ' as json) as ' ~ name if kind == 'json' else name }}
        {{- ',' if not loop.last else '' }}
        {%- endfor %}
    from (
        select
            {%- for name, kind in columns %}
            unnest(cast(${{ name }} as {{ 'varchar' if kind == 'json' else kind }}[])) as {{ name }}
            {{- ',' if not loop.last else '' }}
            {%- endfor %}
    ) as config_rows
{%- endmacro %}
