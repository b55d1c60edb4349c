"""Chinese text helpers shared by every recall: tokens, TF-IDF keywords, stopwords aside.

rjieba cuts exactly like jieba's default dictionary and is about ten times faster; it is
imported on first use (about 0.2 s), once per process, behind a lock. TF-IDF keywords are
jieba.analyse's rule (same cut, same IDF table, same English stop words, same order) without
importing jieba.analyse, which costs 1.3-5 s here: the IDF table is read as data from jieba's
package folder. Punctuation and whitespace tokens are dropped here; stopwords and names are
dropped in SQL, from the seed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_modules: dict[str, Any] = {}


def _load(name: str) -> Any:
    module = _modules.get(name)
    if module is None:
        with _lock:
            module = _modules.get(name)
            if module is None:
                if name == "rjieba":
                    import rjieba

                    module = rjieba
                else:
                    module = _read_idf()
                _modules[name] = module
    return module


# jieba.analyse.TFIDF.stop_words: English function words its keyword rule skips
_TFIDF_STOP_WORDS = frozenset(
    (
        "the",
        "of",
        "is",
        "and",
        "to",
        "in",
        "that",
        "we",
        "for",
        "an",
        "are",
        "by",
        "be",
        "as",
        "on",
        "with",
        "can",
        "if",
        "from",
        "which",
        "you",
        "it",
        "this",
        "then",
        "at",
        "have",
        "all",
        "not",
        "one",
        "has",
        "or",
    )
)


def _read_idf() -> tuple[dict[str, float], float]:
    """jieba's IDF table (word -> idf) and its median, the idf of an unknown word."""
    import importlib.util

    spec = importlib.util.find_spec("jieba")
    assert spec is not None and spec.submodule_search_locations
    path = Path(spec.submodule_search_locations[0]) / "analyse" / "idf.txt"
    idf: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        word, _, value = line.partition(" ")
        if value:
            idf[word] = float(value)
    values = sorted(idf.values())
    return idf, values[len(values) // 2]


def _is_word(token: str) -> bool:
    return any(char.isalnum() for char in token)


def tokenize(text: str) -> list[str]:
    """Words of `text` in order (jieba's precise mode), punctuation and blanks removed."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return [token for token in _load("rjieba").cut(text) if _is_word(token)]


def search_words(text: str) -> list[str]:
    """Words of `text` in jieba's search mode: each long word and the shorter words inside it
    (侦探小说 -> 侦探, 小说, 侦探小说), so compounds that share a part meet (推理小说). Dynamic
    recall's postings and query words; punctuation and blanks removed."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    return [token for token in _load("rjieba").cut_for_search(text) if _is_word(token)]


def search_keywords(text: str, top_k: int = 10) -> list[str]:
    """The `top_k` TF-IDF keywords of `text` (else its words), each with the shorter words
    inside it first (search mode), in order, once each."""
    keywords = extract_keywords(text, top_k) or tokenize(text)
    return list(dict.fromkeys(part for word in keywords for part in search_words(word)))


def case_folded(words: list[str]) -> list[str]:
    """Words with their letters lower-cased: dynamic recall's postings and query words, so
    'Hiking', 'hiking' and 'HIKING' meet (SQL folds tags and descriptions with lower())."""
    return [word.lower() for word in words]


def extract_keywords(text: str, top_k: int = 10) -> list[str]:
    """The `top_k` TF-IDF keywords of `text`, best first (jieba.analyse.extract_tags)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, got {type(text).__name__}")
    idf, median = _load("idf")
    frequency: dict[str, float] = {}
    for word in _load("rjieba").cut(text):
        if len(word.strip()) < 2 or word.lower() in _TFIDF_STOP_WORDS:
            continue
        frequency[word] = frequency.get(word, 0.0) + 1.0
    total = sum(frequency.values())
    weight = {word: count * idf.get(word, median) / total for word, count in frequency.items()}
    ranked = sorted(weight, key=weight.__getitem__, reverse=True)
    return [word for word in ranked[:top_k] if _is_word(word)]
