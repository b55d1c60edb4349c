-- A cycle and a reach into another save (off a fork point) are each reported once, by a message
-- naming the lines; the walk over a cycle stops (this query finishing is the proof). Forks that
-- pass into their origin at their fork point are sound.
with

steps as (
    {{ walk_parent_chain(ref('fixture_chain_lines'), ref('fixture_chain_saves'),
        ref('fixture_chain_saves')) }}
),

problems as (
    {{ find_chain_problems('steps') }}
),

expected as (
    select * from (
        values
        (3, 'save 3: the parent chain has a cycle through line 21'),
        (4, 'save 4: line 30 has parent line 2 from save 1'),
        (6, 'save 6: last_message_id 3 is a line of save 1'),
        (8, 'save 8: line 50 has parent line 4 from save 1')
    ) as expected_problems (save_id, chain_problem)
),

final as (
    (
        select 'unexpected' as mismatch, * from problems
        except
        select 'unexpected', * from expected
    )
    union all
    (
        select 'missing' as mismatch, * from expected
        except
        select 'missing', * from problems
    )
)

select * from final
