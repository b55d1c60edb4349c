"""rolemem.retry: what is retried, how often, and when it gives up."""

import pytest

from rolemem.retry import retry


def failing(*errors: Exception):
    calls: list[int] = []

    def work() -> int:
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return len(calls)

    return work, calls


def test_an_accepted_error_is_retried_until_the_work_returns():
    work, _ = failing(KeyError("a"), KeyError("b"))
    seen: list[tuple[str, int]] = []
    hook = lambda exc, attempt: seen.append((str(exc), attempt))  # noqa: E731
    assert retry(work, attempts=3, on=(KeyError,), wait=0, before_retry=hook) == 3
    assert seen == [("'a'", 1), ("'b'", 2)]


def test_the_last_attempts_error_and_any_other_are_raised():
    work, calls = failing(KeyError("a"), KeyError("b"))
    with pytest.raises(KeyError, match="b"):
        retry(work, attempts=2, on=(KeyError,), wait=0)
    work, calls = failing(ValueError("not retried"))
    with pytest.raises(ValueError):
        retry(work, attempts=5, on=lambda exc: isinstance(exc, KeyError), wait=0)
    assert len(calls) == 1


def test_no_pause_goes_past_the_deadline(monkeypatch):
    pauses: list[float] = []
    monkeypatch.setattr("rolemem.retry.time.sleep", pauses.append)
    work, calls = failing(*[KeyError(n) for n in range(9)])
    with pytest.raises(KeyError):
        retry(work, attempts=10, on=(KeyError,), wait=1.0, deadline=0.0)
    assert (len(calls), pauses) == (1, [])
    work, calls = failing(*[KeyError(n) for n in range(3)])
    assert retry(work, attempts=4, on=(KeyError,), wait=0.01) == 4
    assert all(0 <= pause <= 0.01 * 2**n for n, pause in enumerate(pauses))
    assert len(pauses) == 3
