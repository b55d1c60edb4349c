-- The walk reaches exactly the current branch of each sound save: save 1 skips the regenerated
-- sibling (line 3), save 2 stops at its missing parent, the empty save 5 yields nothing; the
-- fork 7 passes into save 1 at its fork point (line 4), the fork of a fork 10 through both
-- fork points, and the fork 9 just made starts at its fork point.
with

steps as (
    {{ walk_parent_chain(ref('fixture_chain_lines'), ref('fixture_chain_saves'),
        ref('fixture_chain_saves')) }}
),

actual as (
    select save_id, line_id, depth
    from steps
    where save_id in (1, 2, 5, 7, 9, 10)
),

expected as (
    select * from (
        values
        (1, 5, 0),
        (1, 4, 1),
        (1, 2, 2),
        (1, 1, 3),
        (2, 11, 0),
        (2, 10, 1),
        (7, 41, 0),
        (7, 40, 1),
        (7, 4, 2),
        (7, 2, 3),
        (7, 1, 4),
        (9, 5, 0),
        (9, 4, 1),
        (9, 2, 2),
        (9, 1, 3),
        (10, 60, 0),
        (10, 41, 1),
        (10, 40, 2),
        (10, 4, 3),
        (10, 2, 4),
        (10, 1, 5)
    ) as expected_steps (save_id, line_id, depth)
),

final as (
    (
        select 'unexpected' as mismatch, * from actual
        except
        select 'unexpected', * from expected
    )
    union all
    (
        select 'missing' as mismatch, * from expected
        except
        select 'missing', * from actual
    )
)

select * from final
