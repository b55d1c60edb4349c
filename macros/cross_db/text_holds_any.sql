{#
    Whether `text` holds any of `words` (a list of text) as a substring; false for an empty
    or null list. DuckDB: a lambda over the list (an expression, no operator to plan);
    PostgreSQL: an exists over the unnested array.
#}
{% macro text_holds_any(text, words) -%}
    {{- adapter.dispatch('text_holds_any', 'rolemem')(text, words) -}}
{%- endmacro %}

{% macro default__text_holds_any(text, words) -%}
    coalesce(
        list_bool_or(
            -- the lambda's parameter is no column
            list_transform({{ words }}, lambda held_word: strpos({{ text }}, held_word) > 0) -- noqa: RF02, RF03
        ),
        false
    )
{%- endmacro %}

{% macro postgres__text_holds_any(text, words) -%}
    exists (
        select 1 from unnest({{ words }}) as held(held_word)
        where strpos({{ text }}, held.held_word) > 0
    )
{%- endmacro %}
