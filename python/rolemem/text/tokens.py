"""Text helpers shared by every recall: tokens, TF-IDF keywords, stopwords aside, and the
terms dynamic recall indexes and looks up (case-folded; English words stemmed by Snowball).

rjieba cuts exactly like jieba's default dictionary and is about ten times faster. TF-IDF
keywords are jieba.analyse's rule with its IDF table read as data: importing jieba.analyse
costs 1.3-5 s here. Punctuation and whitespace tokens are dropped here; stopwords and names
in SQL, from the seed, except English question words, which must go before stemming (does
stems to doe, which no seed row could name).
"""

from __future__ import annotations

import importlib
import importlib.util
import statistics
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_modules: dict[str, Any] = {}


def _load(name: str) -> Any:
    """rjieba, or (`idf`) jieba's IDF table, once per process."""
    if name not in _modules:
        with _lock:
            if name not in _modules:
                is_module = name == "rjieba"
                _modules[name] = importlib.import_module(name) if is_module else _read_idf()
    return _modules[name]


# jieba.analyse.TFIDF.stop_words: English function words its keyword rule skips
_TFIDF_STOP_WORDS = frozenset(
    """
    the of is and to in that we for an are by be as on with can if from which you it this then
    at have all not one has or
    """.split()
)


# English words that carry no content in a question or a chat line (the Snowball project's
# English stop word list without its contractions, plus the pieces jieba cuts contractions
# into, as NLTK's list has them: pronouns, auxiliaries, determiners, conjunctions,
# prepositions and question words): dropped from a query's words before they are stemmed,
# so "What did Caroline research?" looks up caroline and research only; nor are they
# indexed (postings: an event's length counts the words a query can match).
ENGLISH_STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
    she her hers herself it its itself they them their theirs themselves what which who whom
    this that these those am is are was were be been being have has had having do does did
    doing would should could ought a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up down
    in out on off over under again further then once here there when where why how all any
    both each few more most other some such no nor not only own same so than too very s t can
    will just don ll re ve d m
    """.split()
)


def _read_idf() -> tuple[dict[str, float], float]:
    """jieba's IDF table (word -> idf) and its median, the idf of an unknown word."""
    spec = importlib.util.find_spec("jieba")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "analyse" / "idf.txt"
    idf: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, value = line.partition(" ")
        if value:
            idf[word] = float(value)
    return idf, statistics.median_high(idf.values())


def _is_word(token: str) -> bool:
    return any(char.isalnum() for char in token)


def _cut(text: str, mode: str = "cut") -> list[str]:
    """rjieba's tokens of `text` in `mode` (cut, cut_for_search)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return list(getattr(_load("rjieba"), mode)(text))


def tokenize(text: str) -> list[str]:
    """Words of `text` in order (jieba's precise mode), punctuation and blanks removed."""
    return [token for token in _cut(text) if _is_word(token)]


def search_words(text: str) -> list[str]:
    """Words of `text` in jieba's search mode: each long word and the shorter words inside it
    (侦探小说 -> 侦探, 小说, 侦探小说), so compounds that share a part meet (推理小说). Dynamic
    recall's postings and query words; punctuation and blanks removed."""
    return [token for token in _cut(text, "cut_for_search") if _is_word(token)]


def search_keywords(text: str, top_k: int = 10) -> list[str]:
    """The `top_k` TF-IDF keywords of `text` (else its words), each with the shorter words
    inside it first (search mode), in order, once each. English stopwords are no keywords
    (they would take a place among the `top_k`), unless the text has nothing else."""
    keywords = extract_keywords(
        text, top_k, stop_words=_TFIDF_STOP_WORDS | ENGLISH_STOPWORDS
    ) or tokenize(text)
    return list(dict.fromkeys(part for word in keywords for part in search_words(word)))


def simple_lower(text: str) -> str:
    """`text` lowercased a character at a time, as the engines' lower() does (Python's
    str.lower maps İ to two characters, and Σ by its place in a word)."""
    return "".join(char.lower()[:1] for char in text)


_stemmers = threading.local()


def _english_stem(word: str) -> str:
    """`word`'s Snowball stem when it is an English word (ASCII letters), else `word`."""
    if not (word.isascii() and word.isalpha()):
        return word
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:  # a stemmer object is not thread-safe: one per thread
        import snowballstemmer

        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


def search_terms(words: list[str], names: Sequence[str | None] = ()) -> list[str]:
    """Dynamic recall's terms of `words`, the same at index time (postings) and query time:
    letters case-folded (so 'Hiking', 'hiking' and 'HIKING' meet: SQL folds tags and
    descriptions with lower()), English words stemmed (Researching -> research), Chinese as
    cut. `names` (the player's and the character's, any case) are kept whole, so the query
    words' rule that drops names (SQL, macro expand_recall_words) still knows them."""
    whole = {name.lower() for name in names if name}
    folded = (word.lower() for word in words)
    return [word if word in whole else _english_stem(word) for word in folded]


def extract_keywords(
    text: str, top_k: int = 10, stop_words: frozenset[str] = _TFIDF_STOP_WORDS
) -> list[str]:
    """The `top_k` TF-IDF keywords of `text`, best first (jieba.analyse.extract_tags; its
    English stop words unless `stop_words`, lower-case, says others)."""
    frequency: dict[str, float] = {}
    for word in _cut(text):
        if len(word.strip()) < 2 or word.lower() in stop_words:
            continue
        frequency[word] = frequency.get(word, 0.0) + 1.0
    total = sum(frequency.values())
    idf, median = _load("idf")
    weight = {word: count * idf.get(word, median) / total for word, count in frequency.items()}
    ranked = sorted(weight, key=weight.__getitem__, reverse=True)
    return [word for word in ranked[:top_k] if _is_word(word)]
