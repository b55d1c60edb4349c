{#
    Which facts are current, per `key` (a query, or a save x agent): the one rule of facts that
    change, read by recall (int_memory_facts_resolved) and by analysts (memory_fact_timeline).
    `facts`: a relation of the facts on a chain, with `key`, fact_id, subject, attribute (after
    the aliases), value, cardinality, supersedes_json, line_id and line_position (the stating
    line's place on the chain). Its rows with ended_by_fact_id (null: current),
    ended_at_line_id and, in a `one` slot, replaced_value (the value of the fact it ended).
    Order is by chain position, never by clock (the later written wins at one line): in a `one`
    slot the next fact ends a fact; in a `many` slot the next fact naming its value does,
    stating it again (one row per value) or in `supersedes`. So one window does it, no
    self-join or grouping (recall plans every operator on every call): each fact names its own
    value, a `many` fact also those it supersedes, and a fact is ended by the next row naming
    its value in its slot (a `one` slot: the next row of the slot). At one fact its own value
    sorts last, so a fact never ends itself.
#}
{% macro resolve_facts(facts, key) -%}
    {%- set named = list_prepend(
        facts ~ '.value', json_text_list(facts ~ '.supersedes_json')
    ) %}
    with

    -- each value a fact names: its own first (the row kept), then those it supersedes
    named_values as (
        select
            {{ facts }}.*,
            unnest({{ named }}) as named_value,
            generate_subscripts({{ named }}, 1) = 1 as is_stated
        from {{ facts }}
    ),

    ordered as (
        select
            *,
            lead(fact_id) over next_naming as ended_by_fact_id,
            lead(line_id) over next_naming as ended_at_line_id,
            case when cardinality = 'one' then lag(value) over next_naming end
                as replaced_value
        from named_values
        -- in a `one` slot the next fact ends a fact, whatever it supersedes
        where is_stated or cardinality = 'many'
        window
            next_naming as (
                partition by
                    {{ key }},
                    subject,
                    attribute,
                    case when cardinality = 'many' then named_value end
                order by line_position, fact_id, is_stated
            )
    )

    select * from ordered
    where is_stated
{%- endmacro %}
