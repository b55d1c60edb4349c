-- Per role: whether it is a narrator that witnessed every line, and the other roles of its
-- agent (the owner of its memories): a character witnessed a line when one of its roles was
-- present (macro is_witnessed).
with

roles as (
    select * from {{ ref('stg_app__roles') }}
),

final as (
    select
        own.role_id,
        own.is_omniscient,
        array_agg(cast(mates.role_id as varchar) order by mates.role_id)
        filter (where mates.role_id is not null) as witness_role_ids
    from roles as own
    left join roles as mates
        on mates.agent_id = own.agent_id and mates.role_id <> own.role_id
    group by own.role_id, own.is_omniscient
)

select * from final
