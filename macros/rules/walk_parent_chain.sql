{#
    Walk each save's parent chain from its last line up to the root, one row per step.

    Only the chain is history: sibling branches left by regenerated replies are never reached.
    A fork (a save with `forked_from_line_id`) shares the lines of the save it was forked from:
    its chain may pass into that save's lines at the fork point, and only there (and from that
    save into its own fork point, for a fork of a fork). Any other step into a line of another
    save is kept (so it can be reported, `is_on_chain` false) and ends that walk; a parent that
    does not exist ends the walk silently, as the game's own loader does.

    The guard is a step budget rather than a visited-path list (a path list costs O(depth²)
    memory on long chains): the walk can stay in one save for at most that save's line count
    and cross into another save at most once per save given, so running past the budget proves
    a cycle (`find_chain_problems` names it).

    fork_points: the forked_from_line_id of the walked saves and of the saves they were forked
    from, transitively (not only the walked saves': a fork of a fork crosses through the fork
    point of the save it was forked from); every save's will do.
#}
{% macro walk_parent_chain(lines, saves, fork_points) %}
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

crossing_budget as (
    select count(*) as save_count from save_sizes
),

forks as (
    select
        save_id,
        forked_from_line_id
    from {{ fork_points }}
    where forked_from_line_id is not null
),

walk as (
    select
        saves.save_id,
        cast(null as bigint) as child_line_id,
        tip.line_id,
        tip.parent_line_id,
        tip.save_id as line_save_id,
        tip.save_id = saves.save_id
        or coalesce(tip.line_id = forks.forked_from_line_id, false) as is_on_chain,
        tip.save_id as home_save_id,
        0 as depth,
        0 as home_depth,
        0 as crossings,
        crossing_budget.save_count as max_crossings
    from {{ saves }} as saves
    inner join chain_links as tip
        on tip.line_id = saves.last_message_id
    left join forks
        on forks.save_id = saves.save_id
    cross join crossing_budget

    union all

    select
        walk.save_id,
        walk.line_id as child_line_id,
        parent.line_id,
        parent.parent_line_id,
        parent.save_id as line_save_id,
        parent.save_id = walk.home_save_id
        or coalesce(parent.line_id = forks.forked_from_line_id, false) as is_on_chain,
        parent.save_id as home_save_id,
        walk.depth + 1 as depth,
        case when parent.save_id = walk.home_save_id then walk.home_depth + 1 else 0 end
            as home_depth,
        walk.crossings + case when parent.save_id = walk.home_save_id then 0 else 1 end
            as crossings,
        walk.max_crossings
    from walk
    inner join chain_links as parent
        on parent.line_id = walk.parent_line_id
    inner join save_sizes
        on save_sizes.save_id = walk.home_save_id
    left join forks
        on forks.save_id = walk.home_save_id
    where
        walk.is_on_chain
        and walk.home_depth < save_sizes.line_count
        and walk.crossings < walk.max_crossings
)

select
    save_id,
    child_line_id,
    line_id,
    line_save_id,
    is_on_chain,
    depth
from walk
{% endmacro %}
