{#
    The text the first capturing group of `pattern` matched at its first match in `text`, or
    null when the pattern does not match (or the group matched nothing). Dispatched: DuckDB
    answers '' for no match, PostgreSQL an array of the groups.
#}
{% macro regexp_group(text, pattern) -%}
    {{- adapter.dispatch('regexp_group', 'rolemem')(text, pattern) -}}
{%- endmacro %}

{% macro default__regexp_group(text, pattern) -%}
    nullif(regexp_extract({{ text }}, {{ pattern }}, 1), '')
{%- endmacro %}

{% macro postgres__regexp_group(text, pattern) -%}
    nullif((regexp_match({{ text }}, {{ pattern }}))[1], '')
{%- endmacro %}
