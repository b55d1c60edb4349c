{#
    Which facts are current, per `key` (a query, or a save x agent): the one rule of facts that
    change, read by recall (int_memory_facts_resolved) and by analysts (memory_fact_timeline).
    `facts`: a relation of the facts on a chain, with `key`, fact_id, subject, attribute (after
    the aliases), value, cardinality, supersedes_json and line_position (the stating line's
    place on the chain). A select of those rows with ended_by_fact_id (null: current). Order
    is by chain position, never by clock (the later written wins at one line): in a `one` slot
    the next fact ends a fact; in any slot a later fact naming its value in `supersedes`, or
    stating it again (one row per value), does.
#}
{% macro resolve_facts(facts, key) -%}
    with

    -- the values each fact names in `supersedes`
    named_endings as (
        select
            {{ key }} as resolution_key,
            fact_id as ending_fact_id,
            subject,
            attribute,
            line_position as ending_position,
            unnest({{ json_text_list('supersedes_json') }}) as ended_value
        from {{ facts }}
    ),

    -- the next fact of a fact's slot, and the next stating its value again
    ordered as (
        select
            {{ key }} as resolution_key,
            fact_id,
            subject,
            attribute,
            value,
            cardinality,
            line_position,
            lead(fact_id) over slot_order as next_fact_id,
            lead(line_position) over slot_order as next_position,
            lead(fact_id) over value_order as next_same_value_fact_id,
            lead(line_position) over value_order as next_same_value_position
        from {{ facts }}
        window
            slot_order as (
                partition by {{ key }}, subject, attribute order by line_position, fact_id
            ),
            value_order as (
                partition by {{ key }}, subject, attribute, value
                order by line_position, fact_id
            )
    ),

    ending_candidates as (
        select
            resolution_key,
            fact_id,
            next_fact_id as ending_fact_id,
            next_position as ending_position
        from ordered
        where cardinality = 'one' and next_fact_id is not null
        union all
        select
            resolution_key,
            fact_id,
            next_same_value_fact_id as ending_fact_id,
            next_same_value_position as ending_position
        from ordered
        where next_same_value_fact_id is not null
        union all
        select
            ordered.resolution_key,
            ordered.fact_id,
            named_endings.ending_fact_id,
            named_endings.ending_position
        from ordered
        inner join named_endings
            on
                named_endings.resolution_key = ordered.resolution_key
                and named_endings.subject = ordered.subject
                and named_endings.attribute = ordered.attribute
                and named_endings.ended_value = ordered.value
                and (
                    named_endings.ending_position > ordered.line_position
                    or (
                        named_endings.ending_position = ordered.line_position
                        and named_endings.ending_fact_id > ordered.fact_id
                    )
                )
    ),

    -- the first of them by chain position (the lowest id at one position)
    first_endings as (
        select
            resolution_key,
            fact_id,
            min(ending_position) as ending_position
        from ending_candidates
        group by resolution_key, fact_id
    ),

    endings as (
        select
            ending_candidates.resolution_key,
            ending_candidates.fact_id,
            min(ending_candidates.ending_fact_id) as ended_by_fact_id
        from ending_candidates
        inner join first_endings
            on
                first_endings.resolution_key = ending_candidates.resolution_key
                and first_endings.fact_id = ending_candidates.fact_id
                and first_endings.ending_position = ending_candidates.ending_position
        group by ending_candidates.resolution_key, ending_candidates.fact_id
    )

    select
        {{ facts }}.*,
        endings.ended_by_fact_id
    from {{ facts }}
    left join endings
        on
            endings.resolution_key = {{ facts }}.{{ key }}
            and endings.fact_id = {{ facts }}.fact_id
{%- endmacro %}
