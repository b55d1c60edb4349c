-- What one maintenance run reads, in one row: the players due (int_memory_cleanup_quotas) and
-- the memories to archive (int_memory_cleanup_candidates: which, whose and why), each as one
-- list as the engine aggregates rows. MemoryLoop.maintain reads it over its own request.
-- (noqa AL05: the aliases are read inside the list macros, which the linter does not expand.)
{%- set candidate_fields = [] %}
{%- for name in ['memory_type', 'memory_id', 'agent_id', 'user_id', 'reason'] %}
    {%- do candidate_fields.append((name, 'candidates.' ~ name)) %}
{%- endfor %}
with

final as (
    select
        (
            select {{ list_of_rows('quotas', 'quotas.agent_id, quotas.user_id') }}
            from {{ ref('int_memory_cleanup_quotas') }} as quotas -- noqa: AL05
        ) as quotas,
        (
            select
                {{ list_of_objects(
                    candidate_fields, 'candidates.memory_type, candidates.memory_id'
                ) }}
            from {{ ref('int_memory_cleanup_candidates') }} as candidates -- noqa: AL05
        ) as candidates
)

select * from final
