with

source as (
    select * from {{ source('app', 'memory_event_term') }}
),

renamed as (
    select
        event_id,
        agent_id,
        scope,
        user_id,
        term,
        description_count,
        keyword_count,
        tag_count,
        description_count + keyword_count as term_count
    from source
)

select * from renamed
