{#
    The key sequence `sequence` moved past every key its tables hold (`keys`: each table and
    its key column), never back: rows a game wrote with ids of its own, or a copied store's,
    are never handed out again (docs/decisions/server-ids.md). A DuckDB sequence cannot be
    set: its keys are drawn until it is past them.
#}
{% macro move_sequence_past_keys(sequence, keys) -%}
    with held as (
        {%- for table, column in keys %}
        select max({{ column }}) as key from {{ table }}
        {%- if not loop.last %}
        union all
        {%- endif %}
        {%- endfor %}
    )

    {{ adapter.dispatch('move_sequence_past_keys', 'rolemem')(sequence) }}
{%- endmacro %}

{% macro default__move_sequence_past_keys(sequence) -%}
    select setval(
        '{{ sequence }}',
        greatest(
            (select coalesce(max(held.key), 0) from held),
            (select last_value - case when is_called then 0 else 1 end from {{ sequence }})
        ) + 1,
        false
    )
{%- endmacro %}

{% macro duckdb__move_sequence_past_keys(sequence) -%}
    select max(nextval('{{ sequence }}'))
    from range(
        (select coalesce(max(held.key), 0) from held)
        - (
            select coalesce(last_value, start_value - 1)
            from duckdb_sequences()
            where sequence_name = '{{ sequence }}'
        )
    )
{%- endmacro %}
