{#
    A memory kind's rows wherever official memories count: the players' and the designers'
    official ones (tables of their own: on Citus reference tables, read on every player's
    shard). `players` and `official` are the kind's two staging relations, which
    staged_memory_rows gives the same columns in the same order; ids are unique across both
    tables (one sequence), so the rows are appended, never deduplicated. The one place the
    union is said: the models int_memory_*_with_official each call it once.
#}
{% macro union_official(players, official) -%}
    select * from {{ players }}
    union all
    select * from {{ official }}
{%- endmacro %}
