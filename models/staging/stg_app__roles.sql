with

source as (
    select * from {{ source('app', 'role') }}
),

renamed as (
    select
        id as role_id,
        name as role_name
    from source
)

select * from renamed
