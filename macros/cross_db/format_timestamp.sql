{#
    A timestamp as text by a strftime format (%Y %m %d %H %M %S and literal characters):
    DuckDB's strftime; PostgreSQL's to_char with the same fields (a literal letter quoted, so
    'T' is never read as to_char's ordinal suffix TH).
#}
{% macro format_timestamp(ts, format) -%}
    {{- adapter.dispatch('format_timestamp', 'rolemem')(ts, format) -}}
{%- endmacro %}

{% macro default__format_timestamp(ts, format) -%}
    strftime({{ ts }}, '{{ format }}')
{%- endmacro %}

{% macro postgres__format_timestamp(ts, format) -%}
    {%- set fields = {'%Y': 'YYYY', '%m': 'MM', '%d': 'DD', '%H': 'HH24', '%M': 'MI', '%S': 'SS'} -%}
    {%- set parts = [] -%}
    {%- set rest = namespace(text=format) -%}
    {%- for _ in range(format | length) if rest.text -%}
        {%- if rest.text[:2] in fields -%}
            {%- do parts.append(fields[rest.text[:2]]) -%}
            {%- set rest.text = rest.text[2:] -%}
        {%- else -%}
            {%- do parts.append('"' ~ rest.text[0] ~ '"' if rest.text[0].isalpha() else rest.text[0]) -%}
            {%- set rest.text = rest.text[1:] -%}
        {%- endif -%}
    {%- endfor -%}
    to_char({{ ts }}, '{{ parts | join("") }}')
{%- endmacro %}
