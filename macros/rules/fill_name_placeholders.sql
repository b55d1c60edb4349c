{#
    Replace {{user}} / {{char}} in designer text by the names given, in one pass over the
    text: a name that itself reads "{{char}}" is not substituted again (each placeholder first
    becomes a control character no name may contain, then the names). A name not given leaves
    its placeholder as written. (The braces are built from pieces so Jinja leaves them alone.)
#}
{% macro fill_name_placeholders(text, user_name, char_name) -%}
    replace(
        replace(
            replace(replace({{ text }}, '{' || '{user}}', chr(1)), '{' || '{char}}', chr(2)),
            chr(1),
            coalesce(replace(replace({{ user_name }}, chr(1), ''), chr(2), ''), '{' || '{user}}')
        ),
        chr(2),
        coalesce(replace(replace({{ char_name }}, chr(1), ''), chr(2), ''), '{' || '{char}}')
    )
{%- endmacro %}
