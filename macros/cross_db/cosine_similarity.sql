{#
    The cosine of two vectors (lists of numbers of one length): DuckDB's
    list_cosine_similarity; on PostgreSQL the sums over the pairs of elements.
#}
{% macro cosine_similarity(left, right) -%}
    {{- adapter.dispatch('cosine_similarity', 'rolemem')(left, right) -}}
{%- endmacro %}

{% macro default__cosine_similarity(left, right) -%}
    list_cosine_similarity({{ left }}, {{ right }})
{%- endmacro %}

{% macro postgres__cosine_similarity(left, right) -%}
    (
        select sum(pairs.x * pairs.y) / nullif(sqrt(sum(pairs.x * pairs.x) * sum(pairs.y * pairs.y)), 0)
        from unnest({{ left }}, {{ right }}) as pairs (x, y)
    )
{%- endmacro %}
