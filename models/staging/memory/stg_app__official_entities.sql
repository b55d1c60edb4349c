-- The designers' (official) rows, the same columns as stg_app__memory_entities's.
with

source as (
    select * from {{ source('app', 'official_entity') }}
),

renamed as (
    select
        id as entity_id,
        scope,
        agent_id,
        user_id,
        user_name,
        entity_name,
        entity_type,
        kind,
        keyword,
        description,
        strength,
        recall_count,
        coalesce(is_pinned, false) as is_pinned,
        coalesce(merge_count, 0) as merge_count,
        created_at,
        updated_at,
        last_recalled_at
    from source
)

select * from renamed
