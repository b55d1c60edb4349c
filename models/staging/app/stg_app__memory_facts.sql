with

source as (
    select * from {{ source('app', 'memory_fact') }}
),

renamed as (
    select
        id as fact_id,
        agent_id,
        user_id,
        subject,
        attribute,
        value,
        supersedes as supersedes_json,
        save_id,
        line_id,
        line_ids as line_ids_json,
        batch_key,
        created_at
    from source
)

select * from renamed
