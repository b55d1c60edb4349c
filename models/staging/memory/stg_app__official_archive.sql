-- The designers' (official) rows, the same columns as stg_app__memory_archive's.
with

source as (
    select * from {{ source('app', 'official_archive') }}
),

renamed as (
    select
        id as archive_id,
        memory_type,
        memory_id,
        agent_id,
        user_id,
        reason,
        strength,
        memory,
        archived_at
    from source
)

select * from renamed
