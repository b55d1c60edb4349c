with

source as (
    select * from {{ source('app', 'memory_maintenance_run') }}
),

renamed as (
    select
        id as run_id,
        agent_id,
        user_id,
        rule,
        memory_count,
        archived_count,
        ran_at
    from source
)

select * from renamed
