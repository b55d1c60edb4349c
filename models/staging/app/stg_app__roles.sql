with

source as (
    select * from {{ source('app', 'role') }}
),

renamed as (
    select
        id as role_id,
        name as role_name,
        character_id,
        -- the memory owner: the role's own, else its character's (one id for both)
        coalesce(agent_id, character_id) as agent_id,
        -- a narrator witnessed every line (a store made before the column: none is)
        coalesce(omniscient, false) as is_omniscient
    from source
)

select * from renamed
