with

source as (
    select * from {{ source('app', 'memory_extraction_batch') }}
),

renamed as (
    select
        batch_key,
        save_id,
        target_key,
        user_id,
        agent_id,
        first_line_id,
        last_line_id,
        turn_count,
        reason,
        scene,
        event_count,
        entity_count,
        llm_model,
        extracted_at
    from source
)

select * from renamed
