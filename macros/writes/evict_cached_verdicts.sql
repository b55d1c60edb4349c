{#
    The cached verdicts of one idle (character, context) pair, bound by position ($1, $2).
#}
{% macro evict_cached_verdicts(table) -%}
    delete from {{ table }}
    where character_id = $1 and context_signature = $2
{%- endmacro %}
