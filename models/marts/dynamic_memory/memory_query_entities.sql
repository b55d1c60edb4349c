-- One row per entity memory a query returns, in priority order, in the spec's shape, with
-- the lines the save sees a player's entity came from (its visible mentions': none for one
-- written by hand). Var recall_mention_lines false: no mention of the batch's players came
-- from lines, so none is joined (recall.py asks). Var recall_entities false: the batch's
-- players and agents have no entity and no fact, so no query recalls one, and none of this is
-- planned (a turn plans every operator on every call): no rows, the columns typed.
{%- set lines = var('recall_mention_lines', true) %}
{%- if not var('recall_entities', true) %}

    select
        cast(null as integer) as query_id,
        cast(null as bigint) as result_index,
        cast(null as bigint) as entity_id,
        cast(null as varchar) as scope,
        cast(null as varchar) as kind,
        cast(null as varchar) as keyword,
        cast(null as varchar) as entity_name,
        cast(null as varchar) as description,
        cast(null as varchar[]) as matched_keywords,
        cast(null as varchar) as updatetime,
        cast(null as varchar) as log,
        cast(null as integer) as tier,
        cast(null as double precision) as score,
        cast(null as timestamp) as updated_at,
        cast(null as bigint) as save_id,
        cast(null as bigint[]) as line_ids
    where false
{%- else %}
    with

    recalled as (
        select * from {{ ref('int_memory_entities_recalled') }}
    ),
    {%- if lines %}

        -- the lines a player's entity came from
        sources as (
            select * from {{ ref('int_memory_entity_mention_lines') }}
        ),
    {%- endif %}

    shaped as (
        select
            query_id,
            entity_rank - 1 as result_index,
            entity_id,
            scope,
            kind,
            keyword,
            entity_name,
            -- an entity's own attribute reads whole only with its name in front (v22 note)
            case when kind = '特殊实体属性' then entity_name || description else description end
                as description,
            matched_keywords,
            {{ format_timestamp('updated_at', '%Y-%m-%dT%H:%M:%S') }} as updatetime,
            kind || '--score=' || {{ format_decimal('score', 4) }} || ',index={''index'': '
            || cast(entity_id as varchar) || '}, ' || description || '---命中'
            || {{ list_text('matched_keywords') }} || '，数据库关键词: ' || keyword as log,
            tier,
            {{ round_to('score', 4) }} as score,
            updated_at
        from recalled
    ),

    final as (
        {%- if lines %}
            select
                shaped.*,
                sources.save_id,
                sources.line_ids
            from shaped
            left join sources
                on shaped.query_id = sources.query_id and shaped.entity_id = sources.entity_id
        {%- else %}
            select
                *,
                cast(null as bigint) as save_id,
                cast(null as bigint[]) as line_ids
            from shaped
        {%- endif %}
    )

    select * from final
{%- endif %}
