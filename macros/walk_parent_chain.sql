{#
    Walk each save's parent chain from its last line up to the root, one row per step.

    Only the chain is history: sibling branches left by regenerated replies are never reached.
    The guard is a step budget (the save's line count) rather than a visited-path list: a path
    list costs O(depth²) memory on long chains, while a chain can never be longer than the
    save's lines, so running past the budget proves a cycle (`find_chain_problems` names it).
    A step into a line of another save is kept (so it can be reported) and ends that walk;
    a parent that does not exist ends the walk silently, as the game's own loader does.
#}
{% macro walk_parent_chain(lines, saves) %}
with recursive

-- materialised once: every step of the recursion probes it, and the input may be a view
chain_links as materialized (
    select
        line_id,
        parent_line_id,
        save_id
    from {{ lines }}
),

save_sizes as (
    select
        save_id,
        count(*) as line_count
    from chain_links
    group by save_id
),

walk as (
    select
        saves.save_id,
        cast(null as bigint) as child_line_id,
        tip.line_id,
        tip.parent_line_id,
        tip.save_id as line_save_id,
        coalesce(save_sizes.line_count, 0) as step_budget,
        0 as depth
    from {{ saves }} as saves
    inner join chain_links as tip
        on tip.line_id = saves.last_message_id
    left join save_sizes
        on save_sizes.save_id = saves.save_id

    union all

    select
        walk.save_id,
        walk.line_id as child_line_id,
        parent.line_id,
        parent.parent_line_id,
        parent.save_id as line_save_id,
        walk.step_budget,
        walk.depth + 1 as depth
    from walk
    inner join chain_links as parent
        on parent.line_id = walk.parent_line_id
    where
        walk.line_save_id = walk.save_id
        and walk.depth < walk.step_budget
)

select
    save_id,
    child_line_id,
    line_id,
    line_save_id,
    depth
from walk
{% endmacro %}
