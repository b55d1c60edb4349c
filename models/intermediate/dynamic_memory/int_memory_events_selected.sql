-- The scored events a query returns: with evidence of relevance (no filler), not already in
-- the overview timeline (delivered beside them), at or above score_threshold when one is
-- given, then the top result_limit by score, or, with a roulette seed, a weighted draw without
-- replacement (Efraimidis-Spirakis: key = ln(u) / score, u a hash of event and seed, so the
-- same seed draws the same events).
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

scored as (
    select * from {{ ref('int_memory_events_scored') }}
),

timeline as (
    select * from {{ ref('int_memory_timeline') }}
),

eligible as (
    select
        scored.*,
        queries.result_limit,
        queries.roulette_seed,
        timeline.event_id is not null as is_in_timeline,
        scored.has_evidence
        and scored.score >= coalesce(queries.score_threshold, 0) as is_above_threshold
    from scored
    inner join queries
        on queries.query_id = scored.query_id
    left join timeline
        on timeline.query_id = scored.query_id and timeline.event_id = scored.event_id
),

drawn as (
    select
        *,
        case
            when is_in_timeline or not is_above_threshold then null
            else row_number() over (
                partition by query_id, (not is_in_timeline and is_above_threshold)
                order by
                    case
                        when roulette_seed is null then -score
                        else -ln(
                            ({{ roulette_hash('event_id', 'roulette_seed') }} % 1000000 + 1)
                            / 1000001.0
                        ) / greatest(score, 1e-9)
                    end,
                    event_id
            )
        end as selection_rank
    from eligible
),

-- every scored column and the selection's, named (PostgreSQL has no `* exclude`)
final as (
    select
        {{ scored_event_columns() }},
        profile_score,
        score,
        is_in_timeline,
        is_above_threshold,
        selection_rank,
        coalesce(selection_rank <= result_limit, false) as is_selected
    from drawn
)

select * from final
