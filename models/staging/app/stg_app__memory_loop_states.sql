with

source as (
    select * from {{ source('app', 'memory_loop_state') }}
),

renamed as (
    select
        save_id,
        target_key,
        user_id,
        agent_id,
        last_scene,
        last_observed_at
    from source
)

select * from renamed
