-- The designers' (official) rows, the same columns as stg_app__memory_event_terms's.
with

source as (
    select * from {{ source('app', 'official_event_term') }}
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
