-- The walk reaches exactly the current branch of each sound save: save 1 skips the regenerated
-- sibling (line 3), save 2 stops at its missing parent, the empty save 5 yields nothing.
with

steps as (
    {{ walk_parent_chain(ref('fixture_chain_lines'), ref('fixture_chain_saves')) }}
),

actual as (
    select save_id, line_id, depth
    from steps
    where save_id in (1, 2, 5)
),

expected as (
    select * from (
        values
        (1, 5, 0),
        (1, 4, 1),
        (1, 2, 2),
        (1, 1, 3),
        (2, 11, 0),
        (2, 10, 1)
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
