"""What keeps the grader's and the search's memory small (issue 34): bounded caches, one object per
distinct key set, no second word cache in the stemmers, a search index in flat arrays. Not a memory
measurement: each test pins the structure, so it fails the same way on any machine."""

from __future__ import annotations

from array import array

import pytest

from bot.core import matching, text
from bot.core.matching import Matcher, base_keys, shared
from bot.core.reading import _is_finite_verb, _subject_like
from bot.core.search import SearchIndex
from tests.conftest import shipped_catalog


def test_the_word_caches_are_bounded() -> None:
    """A long run's stream of new words must not grow them without end."""
    for cached in (base_keys, text.word_key, matching._prefixes, _subject_like, _is_finite_verb):
        maxsize = cached.cache_info().maxsize
        assert maxsize is not None
        assert maxsize <= 50_000, cached


def test_equal_key_sets_are_one_object() -> None:
    a = frozenset({"model", "modelirovan"})
    b = frozenset(["modelirovan", "model"])
    assert a is not b
    assert shared(a) is shared(b)
    assert shared(frozenset()) is shared(frozenset())


def test_a_words_keys_are_the_shared_set() -> None:
    word = "обучаются"
    keys = base_keys(word)
    assert shared(frozenset(set(keys))) is keys


def test_the_shared_table_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matching, "_SHARED", {})
    monkeypatch.setattr(matching, "SHARED_MAX", 10)
    for i in range(35):
        shared(frozenset({f"k{i}"}))
        assert len(matching._SHARED) <= 10
    again = frozenset({"k34"})
    assert shared(again) == again  # still equal after a clear; only the sharing was lost


def test_compiled_phrases_share_their_words_and_key_sets() -> None:
    matcher = Matcher()
    one = matcher.phrase("модель обучается быстро")
    two = matcher.phrase("быстро обучается модель")
    assert one[0] is two[2] and one[1] is two[1]
    assert matcher.statement("модель обучается на данных и быстро сходится")[0] is one[0]
    for word in one:
        assert word.keys is shared(word.keys)
        assert word.long is shared(word.long) or word.long is word.keys
        assert word.short is shared(word.short)


def test_the_stemmers_keep_no_cache_of_their_own() -> None:
    """word_key caches every word it stems; PyStemmer's own cache only held second copies."""
    for stemmer in (text._ru, text._en):
        if hasattr(stemmer, "maxCacheSize"):
            assert stemmer.maxCacheSize == 0


def test_the_search_index_is_a_few_flat_arrays() -> None:
    """Per key a number, not two arrays and a set: the index's array count does not grow with the bank."""
    index: SearchIndex = shipped_catalog().search
    fields = vars(index)
    assert sum(isinstance(v, array) for v in fields.values()) <= 8
    for value in fields.values():
        if isinstance(value, dict) and value:
            sample = next(iter(value.values()))
            assert not isinstance(sample, (array, tuple, set)), "a per-key container is back"
    assert all(isinstance(n, int) for n in index._postings.values())
