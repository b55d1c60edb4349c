-- The designers' (official) rows, the same columns as stg_app__memory_events's.
with

source as (
    select * from {{ source('app', 'official_event') }}
),

renamed as (
    select
        id as event_id,
        scope,
        agent_id,
        user_id,
        scene,
        place,
        description,
        deepinsight,
        -- parsed where an answer shows it (a few rows), not for every event a turn scores
        keywords as keywords_json,
        cast(importance as double precision) as importance,
        cast(feedback as double precision) as feedback,
        strength,
        recall_count,
        token_count,
        coalesce(is_pinned, false) as is_pinned,
        save_id,
        first_line_id,
        last_line_id,
        batch_key,
        created_at,
        coalesce(updated_at, created_at) as updated_at,
        last_recalled_at
    from source
)

select * from renamed
