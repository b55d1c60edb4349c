-- One row per entity memory a query returns, in priority order, in the spec's shape.
with

recalled as (
    select * from {{ ref('int_memory_entities_recalled') }}
),

final as (
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
)

select * from final
