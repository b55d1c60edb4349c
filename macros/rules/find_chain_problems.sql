{#
    Turn the steps of `walk_parent_chain` into one readable problem per broken save:
    a step into another save's line off its fork point, or a line visited twice (a cycle). The text is built here,
    in SQL, so dbt's test output and the Python error say the same thing.
#}
{% macro find_chain_problems(steps) %}
with

foreign_steps as (
    select
        save_id,
        'save ' || save_id || ': '
        || case
            when child_line_id is null
                then 'last_message_id ' || line_id || ' is a line of save ' || line_save_id
            else 'line ' || child_line_id || ' has parent line ' || line_id
                || ' from save ' || line_save_id
        end as chain_problem
    from {{ steps }}
    where not is_on_chain
),

repeated_lines as (
    select
        save_id,
        line_id
    from {{ steps }}
    group by save_id, line_id
    having count(*) > 1
),

cycles as (
    select
        save_id,
        'save ' || save_id || ': the parent chain has a cycle through line '
        || min(line_id) as chain_problem
    from repeated_lines
    group by save_id
),

final as (
    select * from foreign_steps
    union all
    select * from cycles
)

select * from final
{% endmacro %}
