"""An event's BM25 postings: its words and its tags' words, in search mode, case-folded and
English words stemmed (text.tokens.search_terms, as the query's words are); English
stopwords are not indexed (no query looks them up)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from .tokens import ENGLISH_STOPWORDS, search_terms, search_words


def postings(description: str, keywords: list[str]) -> dict[str, list[Any]]:
    """memory_event_term's columns: each term once, sorted, with its count in the description
    and in the tags (each tag also whole; their sum is the event's token_count), and how many
    tags it is whole. The description's stopwords are left out, so an event's length counts
    the words a query can match."""
    in_text = Counter(
        search_terms([w for w in search_words(description) if w.lower() not in ENGLISH_STOPWORDS])
    )
    in_tags = Counter(search_terms([t for k in keywords for t in [*search_words(k), k]]))
    whole_tags = Counter(search_terms(list(keywords)))
    terms = sorted(set(in_text) | set(in_tags))
    return {
        "terms": terms,
        "description_counts": [in_text[t] for t in terms],
        "keyword_counts": [in_tags[t] for t in terms],
        "tag_counts": [whole_tags[t] for t in terms],
    }
