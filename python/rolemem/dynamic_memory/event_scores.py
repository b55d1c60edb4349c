"""A query's candidate events scored and selected, written out in Python: models
int_memory_events_scored, int_memory_events_selected, memory_query_events and
memory_recall_candidates (docs block memory_event_score). A recall on the embedded store reads
its candidates (int_memory_event_candidates) and timeline from one statement, which then plans
none of these (about 40 operators); the models stay the rule dbt and PostgreSQL read, and
test_recall_follows_every_write and test_event_scores hold the two equal. The arithmetic is the
models', term for term and in their order, so the doubles agree to the bit (`math` calls the
libm DuckDB calls)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import yaml

from ..sql.project import model_paths
from .sql import COSINE_NAMES, STAT_NAMES

_MODULUS = 2147483647  # macro roulette_hash's Lehmer generator
# each cosine with the score column the models derive from it
_COSINES = tuple(
    zip(COSINE_NAMES, ("dense_score", "context_score", "long_context_score"), strict=True)
)


_EPOCH, _SECOND = datetime(1970, 1, 1), timedelta(seconds=1)


def seconds_between(start: datetime, finish: datetime) -> int:
    """Macro seconds_between on DuckDB: date_diff('second'), whole seconds since the epoch of
    each (floored), subtracted."""
    return (finish - _EPOCH) // _SECOND - (start - _EPOCH) // _SECOND


def format_decimal(value: float, places: int) -> str:
    """Macro format_decimal on DuckDB (printf's %.Nf)."""
    return f"{value:.{places}f}"


def round_to(value: float, places: int) -> float:
    """Macro round_to on DuckDB: round(x, n) for a double, the value times 10^n rounded half
    away from zero, divided back; an infinite or undefined result keeps the value."""
    power = 10.0**places
    scaled = value * power
    whole = math.copysign(float(math.trunc(scaled)), scaled)  # -0.0 stays -0.0
    if abs(scaled - whole) >= 0.5:
        whole += math.copysign(1.0, scaled)
    rounded = whole / power
    return value if math.isinf(rounded) or math.isnan(rounded) else rounded


def roulette_hash(event_id: int, seed: int) -> int:
    """Macro roulette_hash: a Lehmer step of the event and the seed."""
    return ((abs(event_id) % _MODULUS) * 48271 + abs(seed) % _MODULUS) % _MODULUS * 48271 % _MODULUS


def _coalesce(value: float | None) -> float:
    return 0.0 if value is None else value


def _baselines(query: Mapping[str, Any], stats: Mapping[str, Any]) -> dict[str, Any]:
    """Model int_memory_events_scored's baselines: the cosines' min-max scale and the pooled
    mean and square mean the evidence gate reads (the player's events and the reference
    sentences, each summed once before: vector_cache, Vectors.reference_stats)."""
    count = _coalesce(stats.get("cosine_count")) + _coalesce(query["reference_cosine_count"])
    return {
        "has_vector": query["query_embedding"] is not None,
        **{name: stats.get(name) for name in STAT_NAMES[3:]},  # each cosine's min and max
        **{
            f"{name}_mean": None
            if count == 0
            else (_coalesce(stats.get(f"{name}_sum")) + _coalesce(query[f"reference_{name}_sum"]))
            / count
            for name in ("cosine", "cosine_square")
        },
    }


def _dense_z(cosine: float | None, base: Mapping[str, Any]) -> float | None:
    mean, square_mean = base["cosine_mean"], base["cosine_square_mean"]
    if cosine is None or mean is None or square_mean is None:
        return None
    spread = math.sqrt(max(square_mean - mean**2, 0.0))
    return None if spread == 0 else (cosine - mean) / spread


def _components(
    candidate: Mapping[str, Any], query: Mapping[str, Any], base: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Model int_memory_events_scored's components: each signal on its own scale, and whether
    there is evidence the event is relevant (`base` None: no query of the batch has a vector,
    var recall_dense false)."""
    row = dict(candidate)
    exact = query["tier_exact_content"] if candidate["has_query_in_description"] else 0
    row["keyword_score"] = max(candidate["word_tier"], exact)
    for cosine, score in _COSINES:
        value = candidate[cosine]
        if base is None or not base["has_vector"]:
            row[score] = None
        elif value is None or base[f"{cosine}_min"] is None or base[f"{cosine}_max"] is None:
            row[score] = 0.0
        else:
            width = base[f"{cosine}_max"] - base[f"{cosine}_min"]
            row[score] = 0.0 if width == 0 else (value - base[f"{cosine}_min"]) / width
    row["dense_z"] = None if base is None else _dense_z(candidate["cosine"], base)
    row["time_score"] = (
        (1.0 if candidate["is_in_time_window"] else 0.0) if candidate["has_time_window"] else None
    )
    row["time_answer_score"] = (
        (1.0 if candidate["names_time"] else 0.0) if candidate["asks_when"] else None
    )
    now = query["now"]
    row["recency_score"] = math.exp(
        -math.log(2)
        * max(seconds_between(candidate["created_at"], now), 0)
        / 86400.0
        / query["recency_half_life_days"]
    )
    row["use_count_score"] = min(1.0, math.log(1 + candidate["recall_count"]) / math.log(11))
    last = candidate["last_recalled_at"]
    row["recent_use_score"] = (
        0.0
        if last is None
        else math.exp(-max(seconds_between(last, now), 0) / 3600.0 / query["recent_use_hours"])
    )
    row["is_in_future"] = candidate["created_at"] > now
    dense_z = row["dense_z"]
    row["has_evidence"] = bool(
        candidate["bm25_raw"] > 0
        or candidate["word_tier"] > 0
        or (candidate["has_query_in_description"] and query["tier_exact_content"] > 0)
        or (dense_z is not None and dense_z >= query["dense_gate_sigma"])
        or candidate["is_in_time_window"]
    )
    return row


def _ranks(rows: Sequence[dict[str, Any]], keys: Sequence[Any], name: str) -> None:
    """rank() over the query's rows ordered by `keys` (one per row, ascending in the window's
    order): 1 + how many rows sort strictly before."""
    ordered = sorted(keys)
    for row, key in zip(rows, keys, strict=True):
        row[name] = bisect.bisect_left(ordered, key) + 1


def _descending(value: float | None) -> tuple[bool, float]:
    """A sort key for `value desc nulls last`."""
    return (True, 0.0) if value is None else (False, -value)


def _dense_sum(row: Mapping[str, Any]) -> float | None:
    scores = [row[score] for _, score in _COSINES]
    return None if any(s is None for s in scores) else scores[0] + scores[1] + scores[2]


# the signals a row may lack, each with its weight (the words' two it always has)
_WEIGHTED = (
    ("dense_weight", "dense_score"),
    ("context_dense_weight", "context_score"),
    ("context_dense_weight", "long_context_score"),
    ("time_weight", "time_score"),
)


def _relevance(row: Mapping[str, Any], query: Mapping[str, Any], fusion: str) -> float:
    """Model int_memory_events_scored's relevance: one fusion of the signals, over the weights
    of the signals the row has."""
    if fusion == "rrf":
        k = query["rrf_k"]

        def reciprocal(rank: int | None) -> float:
            return 0.0 if rank is None else 1.0 / (k + rank)

        fused = (
            query["bm25_weight"] * reciprocal(row["bm25_rank"])
            + query["keyword_weight"] * reciprocal(row["keyword_rank"])
            + (query["dense_weight"] + 2 * query["context_dense_weight"])
            * reciprocal(row["dense_rank"])
            + query["time_weight"] * reciprocal(row["time_rank"])
        ) * (k + 1)
    else:
        fused = (
            query["bm25_weight"] * row["bm25_score"]
            + query["keyword_weight"] * row["keyword_score"]
        )
        for weight, score in (*_WEIGHTED, ("time_answer_weight", "time_answer_score")):
            fused = fused + (0.0 if row[score] is None else query[weight] * row[score])
    weights = query["bm25_weight"] + query["keyword_weight"]
    for weight, score in _WEIGHTED:
        weights = weights + (0 if row[score] is None else query[weight])
    answer = row["time_answer_score"] is None or query["fusion"] == "rrf"
    weights = weights + (0 if answer else query["time_answer_weight"])
    return fused / weights


def scored(
    candidates: Sequence[Mapping[str, Any]],
    query: Mapping[str, Any],
    stats: Mapping[str, Any],
    variables: Mapping[str, Any],
) -> list[dict[str, Any]]:
    """Model int_memory_events_scored for one query: its candidates with every component, the
    relevance, the profile score and the fused score. `query`: int_memory_queries' row (its
    values and the settings); `stats`: its cosines' statistics (int_memory_query_cosine_stats);
    `variables`: the batch's (recall_fusion, recall_dense)."""
    fusion = variables.get("recall_fusion")
    base = _baselines(query, stats) if variables.get("recall_dense", True) else None
    rows = [_components(candidate, query, base) for candidate in candidates]
    best = max((row["bm25_raw"] for row in rows), default=0.0)
    for row in rows:
        row["bm25_score"] = 0.0 if best == 0 else row["bm25_raw"] / best
    if fusion != "convex":
        # the reciprocal ranks (fusion 'rrf'): each signal's rank where the row has it
        _ranks(rows, [_descending(row["bm25_raw"]) for row in rows], "bm25_rank")
        _ranks(rows, [_descending(row["keyword_score"]) for row in rows], "keyword_rank")
        meaning = [(*_descending(_dense_sum(row)), *_descending(row["cosine"])) for row in rows]
        _ranks(rows, meaning, "dense_rank")
        for row in rows:
            for signal, score in (("bm25", "bm25_raw"), ("keyword", "keyword_score")):
                if not row[score] > 0:
                    row[f"{signal}_rank"] = None
            if row["cosine"] is None:
                row["dense_rank"] = None
            in_time = row["time_score"] is not None and row["time_score"] > 0
            row["time_rank"] = 1 if in_time else None
    for row in rows:
        relevance = _relevance(row, query, query["fusion"] if fusion is None else fusion)
        profile = (
            query["importance_weight"] * row["importance"]
            + query["recency_weight"] * (0 if row["is_in_future"] else row["recency_score"])
            + query["use_count_weight"] * row["use_count_score"]
            + query["recent_use_penalty_weight"] * (1 - row["recent_use_score"])
            + query["feedback_weight"] * row["feedback"]
        )
        row["relevance_score"] = relevance
        row["profile_score"] = profile + query["content_match_weight"] * relevance
        row["score"] = query["relevance_share"] * relevance + (1 - query["relevance_share"]) * (
            profile + query["content_match_weight"] * relevance
        )
    return rows


def selected(
    rows: Sequence[dict[str, Any]], query: Mapping[str, Any], timeline: Iterable[int]
) -> None:
    """Model int_memory_events_selected for one query: with evidence, not in its `timeline`
    (event ids), at or above the threshold, then the top result_limit by score or, with a
    roulette seed, a weighted draw."""
    shown = set(timeline)
    threshold = query["score_threshold"] or 0
    seed = query["roulette_seed"]
    for row in rows:
        row["is_in_timeline"] = row["event_id"] in shown
        row["is_above_threshold"] = row["has_evidence"] and row["score"] >= threshold
    eligible = [row for row in rows if not row["is_in_timeline"] and row["is_above_threshold"]]

    def order(row: Mapping[str, Any]) -> tuple[float, int]:
        if seed is None:
            return -row["score"], row["event_id"]
        draw = (roulette_hash(row["event_id"], seed) % 1000000 + 1) / 1000001.0
        return -math.log(draw) / max(row["score"], 1e-9), row["event_id"]

    for row in rows:
        row["selection_rank"] = None
    for rank, row in enumerate(sorted(eligible, key=order), 1):
        row["selection_rank"] = rank
    for row in rows:
        rank = row["selection_rank"]
        row["is_selected"] = rank is not None and rank <= query["result_limit"]


def shown_events(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Model memory_query_events for one query: its selected events, best first, in the
    answer's shape (each candidate row carries the event's fields and times as text)."""
    shown = sorted((row for row in rows if row["is_selected"]), key=lambda r: r["selection_rank"])
    return [
        {
            "query_id": row["query_id"],
            "result_index": row["selection_rank"] - 1,
            "event_id": row["event_id"],
            "scope": row["scope"],
            "description": row["description"],
            "deepinsight": row["deepinsight"],
            "place": row["place"],
            "keywords": row["keywords"],
            "updatetime": row["updatetime"],
            "time_text": row["time_text"],
            "log": _event_log(row),
            "score": round_to(row["score"], 4),
            "created_at": row["created_at"],
        }
        for row in shown
    ]


def _event_log(row: Mapping[str, Any]) -> str | None:
    """The event's log line (SQL's || is null when a part is)."""
    if row["description"] is None or row["updatetime"] is None:
        return None
    place = "未知" if row["place"] is None else row["place"]
    insight = "" if row["deepinsight"] is None else f"这表明了{row['deepinsight']}"
    return (
        f"[记忆事件]--score={format_decimal(row['score'], 4)},index={row['event_id']}."
        f"在{row['updatetime']}左右, 地点：{place}。详细记忆事件为{row['description']}{insight}"
    )


# model memory_recall_candidates' columns as its YAML lists them, but its status and reason
_CANDIDATE_COLUMNS = tuple(
    column["name"]
    for column in yaml.safe_load(
        model_paths()["memory_recall_candidates"].with_suffix(".yml").read_text(encoding="utf-8")
    )["models"][0]["columns"]
    if column["name"] not in ("status", "reason")
)


def judged(rows: Iterable[Mapping[str, Any]], query: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Model memory_recall_candidates for one query: every scored event with its components,
    its status and why, best first (score descending, then event id)."""
    return [
        {
            **{name: row[name] for name in _CANDIDATE_COLUMNS},
            **dict(zip(("status", "reason"), _status(row, query), strict=True)),
        }
        for row in sorted(rows, key=lambda r: (-r["score"], r["event_id"]))
    ]


def _status(row: Mapping[str, Any], query: Mapping[str, Any]) -> tuple[str, str]:
    score = format_decimal(row["score"], 4)
    if row["is_selected"]:
        return "shown", f"selected #{row['selection_rank']} (score {score})"
    if row["is_in_timeline"]:
        return "in the timeline", "already in the overview timeline, delivered beside it"
    if not row["has_evidence"]:
        why = "no shared word or tag, no clear meaning match, not in the time named"
        return "no evidence", why
    if not row["is_above_threshold"]:
        threshold = format_decimal(query["score_threshold"] or 0, 4)
        return "below the threshold", f"score {score} is under the threshold {threshold}"
    limit = query["result_limit"]
    return "over the limit", f"ranked #{row['selection_rank']}, past the limit of {limit}"
