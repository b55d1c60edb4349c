-- Every candidate event of a query (int_memory_event_candidates) with each score component,
-- whether there is evidence it is relevant, and the fused score (docs block
-- memory_event_score). A caller that knows its batch before the statement plans only what the
-- batch needs (each operator is planned on every call): var recall_fusion ('convex' or
-- 'rrf') keeps one fusion's terms, var recall_dense false (no query has a vector) drops the
-- dense signals, which are null without a vector anyway. Unset, both are decided per query.
{%- set fusion = var('recall_fusion', none) %}
{%- set dense = var('recall_dense', true) %}
{%- set rrf_relevance -%}
(
    queries.bm25_weight * coalesce(1.0 / (queries.rrf_k + ranked.bm25_rank), 0)
    + queries.keyword_weight * coalesce(1.0 / (queries.rrf_k + ranked.keyword_rank), 0)
    + (queries.dense_weight + 2 * queries.context_dense_weight)
    * coalesce(1.0 / (queries.rrf_k + ranked.dense_rank), 0)
    + queries.time_weight * coalesce(1.0 / (queries.rrf_k + ranked.time_rank), 0)
) * (queries.rrf_k + 1)
{%- endset %}
{%- set convex_relevance -%}
queries.bm25_weight * ranked.bm25_score
+ queries.keyword_weight * ranked.keyword_score
+ coalesce(queries.dense_weight * ranked.dense_score, 0)
+ coalesce(queries.context_dense_weight * ranked.context_score, 0)
+ coalesce(queries.context_dense_weight * ranked.long_context_score, 0)
+ coalesce(queries.time_weight * ranked.time_score, 0)
+ coalesce(queries.time_answer_weight * ranked.time_answer_score, 0)
{%- endset %}
with

queries as (
    select * from {{ ref('int_memory_queries') }}
),

candidates as (
    select * from {{ ref('int_memory_event_candidates') }}
),

{% if dense %}
    cosine_stats as (
        select * from {{ ref('int_memory_query_cosine_stats') }}
    ),

    -- the baseline a cosine is judged against: the player's reachable events and fixed unrelated
    -- reference sentences (so a store of a few memories has a baseline too), pooled
    baselines as (
        select
            queries.query_id,
            queries.query_embedding is not null as has_vector,
            cosine_stats.cosine_min,
            cosine_stats.cosine_max,
            cosine_stats.context_cosine_min,
            cosine_stats.context_cosine_max,
            cosine_stats.long_context_cosine_min,
            cosine_stats.long_context_cosine_max,
            (coalesce(cosine_stats.cosine_sum, 0) + coalesce(queries.reference_cosine_sum, 0))
            / nullif(
                coalesce(cosine_stats.cosine_count, 0)
                + coalesce(queries.reference_cosine_count, 0),
                0
            ) as cosine_mean,
            (
                coalesce(cosine_stats.cosine_square_sum, 0)
                + coalesce(queries.reference_cosine_square_sum, 0)
            )
            / nullif(
                coalesce(cosine_stats.cosine_count, 0)
                + coalesce(queries.reference_cosine_count, 0),
                0
            ) as cosine_square_mean
        from queries
        left join cosine_stats
            on cosine_stats.query_id = queries.query_id
    ),
{% endif %}

-- each signal on its own scale; the query's settings stay out of the rows the rank windows
-- below sort (a window carries every column it is given)
components as (
    select
        candidates.*,
        -- retrieval tiers (bot-memory-notes 2.3): a word's tier, or the whole query inside the
        -- description
        greatest(
            candidates.word_tier,
            case when candidates.has_query_in_description then queries.tier_exact_content else 0 end
        ) as keyword_score,
        {% if dense %}
            {% for cosine, score in [
                ('cosine', 'dense_score'),
                ('context_cosine', 'context_score'),
                ('long_context_cosine', 'long_context_score'),
            ] %}
                -- the cosine on the player's min-max scale
                case
                    when baselines.has_vector
                        then coalesce(
                            (candidates.{{ cosine }} - baselines.{{ cosine }}_min)
                            / nullif(baselines.{{ cosine }}_max - baselines.{{ cosine }}_min, 0),
                            0
                        )
                end as {{ score }},
            {% endfor %}
            (candidates.cosine - baselines.cosine_mean)
            / nullif(sqrt(greatest(baselines.cosine_square_mean - baselines.cosine_mean ^ 2, 0)), 0)
                as dense_z,
        {% else %}
            cast(null as double precision) as dense_score,
            cast(null as double precision) as context_score,
            cast(null as double precision) as long_context_score,
            cast(null as double precision) as dense_z,
        {% endif %}
        case
            when candidates.has_time_window
                then cast(
                    case when candidates.is_in_time_window then 1 else 0 end as double precision
                )
        end as time_score,
        -- a query asking when is answered by a memory that says when (no evidence alone)
        case
            when candidates.asks_when
                then cast(case when candidates.names_time then 1 else 0 end as double precision)
        end as time_answer_score,
        exp(
            -ln(2) * greatest({{ seconds_between('candidates.created_at', 'queries.now') }}, 0)
            / 86400.0 / queries.recency_half_life_days
        ) as recency_score,
        least(1.0, ln(1 + candidates.recall_count) / ln(11)) as use_count_score,
        case
            when candidates.last_recalled_at is null then 0.0
            else exp(
                -greatest({{ seconds_between('candidates.last_recalled_at', 'queries.now') }}, 0)
                / 3600.0 / queries.recent_use_hours
            )
        end as recent_use_score,
        -- the future has not happened yet: an event dated after now is no evidence of recency
        candidates.created_at > queries.now as is_in_future,
        -- evidence: a shared word or tag, a cosine clearly above the player's other events, or
        -- the time the query names; without it a memory is never recalled
        candidates.bm25_raw > 0
        or candidates.word_tier > 0
        or candidates.has_query_in_description and queries.tier_exact_content > 0
        {% if dense %}
            or coalesce(
                (candidates.cosine - baselines.cosine_mean)
                / nullif(
                    sqrt(greatest(baselines.cosine_square_mean - baselines.cosine_mean ^ 2, 0)), 0
                )
                >= queries.dense_gate_sigma,
                false
            )
        {% endif %}
        or candidates.is_in_time_window as has_evidence
    from candidates
    inner join queries
        on queries.query_id = candidates.query_id
    {% if dense %}
        inner join baselines
            on baselines.query_id = candidates.query_id
    {% endif %}
),

-- BM25 normalised by the query's best, and reciprocal ranks per signal (fusion = 'rrf')
ranked as (
    select
        *,
        {% if fusion != 'convex' %}
            case when bm25_raw > 0 then rank() over (
                partition by query_id order by bm25_raw desc
            ) end as bm25_rank,
            case when keyword_score > 0 then rank() over (
                partition by query_id order by keyword_score desc
            ) end as keyword_rank,
            -- the three dense signals rank as one (the sum of their normalised scores)
            case when cosine is not null then rank() over (
                partition by query_id
                order by
                    dense_score + context_score + long_context_score desc nulls last,
                    cosine desc
            ) end as dense_rank,
            case when time_score > 0 then 1 end as time_rank,
        {% endif %}
        coalesce(bm25_raw / nullif(max(bm25_raw) over (partition by query_id), 0), 0)
            as bm25_score
    from components
),

relevant as (
    select
        ranked.*,
        (
            {% if fusion == 'rrf' %}
                {{ rrf_relevance }}
            {% elif fusion == 'convex' %}
                {{ convex_relevance }}
            {% else %}
                case
                    when queries.fusion = 'rrf' then {{ rrf_relevance }}
                    else {{ convex_relevance }}
                end
            {% endif %}
        ) / (
            queries.bm25_weight + queries.keyword_weight
            + case when ranked.dense_score is null then 0 else queries.dense_weight end
            + case when ranked.context_score is null then 0 else queries.context_dense_weight end
            + case
                when ranked.long_context_score is null then 0 else queries.context_dense_weight
            end
            + case when ranked.time_score is null then 0 else queries.time_weight end
            -- convex only: in rrf every match would rank 1 and outweigh the graded word ranks
            + case
                when ranked.time_answer_score is null or queries.fusion = 'rrf' then 0
                else queries.time_answer_weight
            end
        ) as relevance_score,
        queries.importance_weight * ranked.importance
        + queries.recency_weight
        * case when ranked.is_in_future then 0 else ranked.recency_score end
        + queries.use_count_weight * ranked.use_count_score
        + queries.recent_use_penalty_weight * (1 - ranked.recent_use_score)
        + queries.feedback_weight * ranked.feedback as profile_without_relevance,
        queries.content_match_weight,
        queries.relevance_share
    from ranked
    inner join queries
        on queries.query_id = ranked.query_id
),

-- the candidates' and the signals' columns, named (PostgreSQL has no `* exclude`): the
-- ranks and weights stay behind
final as (
    select
        {{ scored_event_columns() }},
        profile_without_relevance + content_match_weight * relevance_score as profile_score,
        relevance_share * relevance_score
        + (1 - relevance_share)
        * (profile_without_relevance + content_match_weight * relevance_score) as score
    from relevant
)

select * from final
