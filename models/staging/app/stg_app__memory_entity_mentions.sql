with

source as (
    select * from {{ source('app', 'memory_entity_mention') }}
),

renamed as (
    select
        id as mention_id,
        entity_id,
        user_id,
        agent_id,
        target_key,
        batch_key,
        description,
        -- parsed where an answer shows it (a player's memory page), not by every turn
        line_ids as line_ids_json,
        save_id,
        first_line_id,
        last_line_id,
        root_line_id,
        created_at
    from source
)

select * from renamed
