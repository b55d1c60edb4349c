{#
    A text without the marks the prompt fill uses (U+E001..U+E080 for its placeholders, U+F8FF
    for the dynamic memory's place): what a value must be before fill_prompt_template reads it
    with values_unmarked.
#}
{% macro prompt_marks_removed(text) -%}
    regexp_replace({{ text }}, '[{{ '%c' % 57345 }}-{{ '%c' % 57472 }}{{ '%c' % 63743 }}]', '', 'g')
{%- endmacro %}
