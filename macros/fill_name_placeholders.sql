{#
    Replace {{user}} / {{char}} in designer text by the names given; a name not given leaves
    its placeholder as written. (The braces are built from pieces so Jinja leaves them alone.)
#}
{% macro fill_name_placeholders(text, user_name, char_name) -%}
    replace(
        replace({{ text }}, '{' || '{user}}', coalesce({{ user_name }}, '{' || '{user}}')),
        '{' || '{char}}',
        coalesce({{ char_name }}, '{' || '{char}}')
    )
{%- endmacro %}
