"""Abuse that costs nothing: slow and stalled clients on loopback, with raw sockets. Headers
and bodies have deadlines (408 in the error shape), a body too large is answered 413 at once,
a request without a key is refused before its body is read, stalled connections are capped
and never lock out /health; a large body is parsed once and validated on the body lane (one
job at a time, the event loop free between them), with the answers a small body gets;
/console sends a Content-Security-Policy and X-Frame-Options; redirects never echo the Host
header.

Timings are asserted only with generous bounds (the machine is shared); the /health latency
under load is printed (pytest -s) for the record, and measured in
bench/bench_service_abuse.py (40 clients posting 1 MiB bodies with a key)."""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import threading
import time
import warnings
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from rolemem.character_memory import store_config
from rolemem.character_memory.config import ConfigWarning, parse_designer_json
from rolemem.service import create_app
from rolemem.service.core.body_lane import GAP, BodyLane
from rolemem.service.core.connections import server_options
from rolemem.service.core.settings import ServiceSettings

from .conftest import demo_store, error_of, raw_connection, serving

KEY = "game"
SETTINGS = ServiceSettings(api_key=KEY, header_timeout=1.0, body_timeout=2.0, max_connections=64)


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Iterator[httpx.Client]:
    path = demo_store(str(tmp_path_factory.mktemp("abuse") / "abuse.duckdb"))
    app = create_app(path, embedder=None, settings=SETTINGS)
    with serving(app, **server_options(SETTINGS)) as client:
        yield client


def _answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """The status, headers and body of the one answer on `sock` (read to its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {name.lower(): value.strip() for name, _, value in (x.partition(":") for x in lines)}
    while len(body) < int(headers.get("content-length", "0")):
        chunk = sock.recv(65536)
        assert chunk, "closed in the middle of the answer"
        body += chunk
    return int(status_line.split()[1]), headers, body


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def _error(body: bytes) -> dict[str, Any]:
    return error_of(httpx.Response(400, content=body))


def _trickle(sock: socket.socket, data: bytes, stop: threading.Event) -> threading.Thread:
    """Send `data` one byte a second until `stop` or the connection closes."""

    def send() -> None:
        for byte in data:
            if stop.wait(1.0):
                return
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                return

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("target", "content_type"),
    [
        (b"/query", b"application/json"),
        # a bulk import's body is read by a reader of its own: the same deadline, whole
        (b"/saves/1/import?user_id=mumu", b"application/x-ndjson"),
    ],
)
def test_a_body_at_one_byte_a_second_gets_408_within_its_deadline(service, target, content_type):
    sock = raw_connection(service)
    stop = threading.Event()
    sock.sendall(
        b"POST " + target + b" HTTP/1.1\r\nHost: rolemem\r\nX-API-Key: game\r\n"
        b"Content-Type: " + content_type + b"\r\nContent-Length: 100\r\n\r\n"
    )
    started = time.monotonic()
    _trickle(sock, b"{" + b" " * 99, stop)
    try:
        status, headers, body = _answer(sock)
        elapsed = time.monotonic() - started
    finally:
        stop.set()
    assert status == 408 and headers["connection"] == "close"
    assert _error(body) == {
        "type": "RequestTimeout",
        "message": "the body did not arrive within 2 s",
    }
    assert 1.9 <= elapsed < 5, elapsed
    assert _closed_within(sock, 5)


@pytest.mark.parametrize(
    ("method", "target", "field"),
    [
        ("GET", "/users/alice%00/export", "user_id"),
        ("GET", "/users/alice/timeline?agent_id=q%00iyu", "agent_id"),
        ("GET", "/saves/1?user_id=%FF", "user_id"),
        ("POST", "/config/import/sillytavern/x%ED%A0%80", "character_id"),  # a lone surrogate
        ("POST", "/saves/1/import?user_id=mumu%00", "user_id"),
        ("GET", "/health/%00", "path"),
        ("GET", "/users/alice/memories?%00=1", "query"),
    ],
)
def test_a_path_or_query_value_that_is_not_storable_text_is_a_422_naming_it(
    service, method, target, field
):
    """A NUL, or bytes that are not UTF-8, in a path or query value is refused as the same in
    a body is, before any route reads it (PostgreSQL's text holds no NUL; a byte that is not
    UTF-8 would be stored as U+FFFD)."""
    answer = service.request(
        method,
        target,
        headers={"X-API-Key": KEY, "Content-Type": "application/json"},
        content=b"{}",
    )
    assert answer.status_code == 422
    assert error_of(answer) == {
        "type": "ValidationError",
        "message": f"{field}: is not text rolemem can store (a NUL character, or bytes not UTF-8)",
        "field": field,
    }


@pytest.mark.parametrize(
    "written", ["5_0", "5.0", "%205", "5%20", "+5", "%2B5", "--5", "-", "-0", "-00", "%D9%A5"]
)
@pytest.mark.parametrize(
    ("target", "field"),
    [
        ("/saves/{}?user_id=mumu", "save_id"),
        ("/saves/1/lines?user_id=mumu&limit={}", "limit"),
        ("/saves/1/lines?user_id=mumu&before={}", "before"),
        ("/users/mumu/memories?offset={}", "offset"),
        ("/users/mumu/timeline?agent_id=qiyu&save_id={}", "save_id"),
    ],
)
def test_a_path_or_query_integer_is_ascii_digits_only(service, target, field, written):
    """pydantic's lax int read '5_0' as 50 (another save, a longer page), '5.0', ' 5', '+5'
    as 5, '-0' as 0: a path or query integer is its digits, nothing else, and the value is
    not echoed."""
    answer = service.get(target.format(written), headers={"X-API-Key": KEY})
    assert (answer.status_code, error_of(answer)) == (
        422,
        {
            "type": "ValidationError",
            "message": f"{field}: must be a whole number in ASCII digits (0-9)",
            "field": field,
        },
    )
    # the digits themselves are read
    assert service.get(target.format("01"), headers={"X-API-Key": KEY}).status_code == 200


@pytest.mark.parametrize(
    ("target", "field", "bound"),
    [
        (
            "/saves/1/lines?user_id=mumu&limit=-5",
            "limit",
            "Input should be greater than or equal to 1",
        ),
        ("/users/mumu/memories?offset=-1", "offset", "Input should be greater than or equal to 0"),
        ("/saves/-01?user_id=mumu", "save_id", "Input should be greater than or equal to 1"),
    ],
)
def test_a_negative_path_or_query_integer_is_told_its_bound(service, target, field, bound):
    """No path or query integer is negative: a '-' gets the bound's own message, not the
    digits' one, so the caller learns the range."""
    answer = service.get(target, headers={"X-API-Key": KEY})
    assert (answer.status_code, error_of(answer)) == (
        422,
        {"type": "ValidationError", "message": f"{field}: {bound}", "field": field},
    )


def test_a_body_nested_deeper_than_64_levels_is_a_422_and_writes_nothing(service):
    """A lorebook carries its free-form fields into the answer, which pydantic cannot
    serialize some 250 levels deep: a body nested past 64 levels is refused before any route
    reads it, naming where (brackets inside its strings hide no level); 64 levels pass."""

    def nested(value: Any, levels: int) -> Any:
        for _ in range(levels):
            value = [value]
        return value

    def lorebook(foo: Any) -> dict[str, Any]:  # root, entries, "0", extensions: 4 levels
        entry = {"uid": 0, "key": ["a"], "content": "x", "extensions": {"foo": foo}}
        return {"entries": {"0": entry}}

    headers = {"X-API-Key": KEY}
    refused = service.post(
        "/config/import/sillytavern/deep", headers=headers, json=lorebook(nested(1, 61))
    )
    assert refused.status_code == 422
    field = "entries.0.extensions.foo" + "[0]" * 60
    assert error_of(refused) == {
        "type": "ValidationError",
        "message": f"{field}: nests deeper than 64 levels",
        "field": field,
    }
    # 40 levels, then 40 more between a string of 40 closing brackets and one of 40 opening
    # ones: the body's brackets alone nest 40 deep
    hidden = nested(["]" * 40, nested(1, 40), "[" * 40], 39)
    refused = service.post(
        "/config/import/sillytavern/deep", headers=headers, json=lorebook(hidden)
    )
    field = "entries.0.extensions.foo" + "[0]" * 39 + "[1]" + "[0]" * 20
    assert (refused.status_code, error_of(refused)["field"]) == (422, field)
    assert service.get("/config/deep", headers=headers).status_code == 404
    imported = service.post(
        "/config/import/sillytavern/deep", headers=headers, json=lorebook(nested(1, 60))
    )
    assert imported.status_code == 200


def test_headers_at_one_byte_a_second_get_408_and_a_silent_connection_is_closed(service):
    slow, silent = raw_connection(service), raw_connection(service)
    stop = threading.Event()
    slow.sendall(b"GET /health HTTP/1.1\r\n")
    started = time.monotonic()
    _trickle(slow, b"Host: rolemem\r\n\r\n", stop)
    try:
        status, headers, body = _answer(slow)
        elapsed = time.monotonic() - started
    finally:
        stop.set()
    assert status == 408 and headers["connection"] == "close"
    assert _error(body) == {
        "type": "RequestTimeout",
        "message": "the request's headers did not arrive within 1 s",
    }
    assert elapsed < 4, elapsed
    assert _answer(silent)[0] == 408 and _closed_within(silent, 5)
    for sock in (slow, silent):
        sock.close()


def test_a_kept_alive_connection_gets_a_new_header_deadline(service):
    sock = raw_connection(service)
    for _ in range(2):  # two requests, each within its deadline, on one connection
        time.sleep(0.6)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: rolemem\r\n\r\n")
        status, _, body = _answer(sock)
        assert (status, json.loads(body)) == (200, {"status": "ok"})
    sock.close()


@pytest.fixture(scope="module")
def large_answer(tmp_path_factory) -> Iterator[httpx.Client]:
    """A service whose designer config export of `large` is ~10 MB (past what the kernel's
    buffers hold on loopback), with short header and send deadlines; uvicorn's keep-alive
    long enough for a slow reader to ask again on its connection."""
    path = demo_store(str(tmp_path_factory.mktemp("large") / "large.duckdb"))
    entries = [
        {"内容": f"画廊里的第{i:05d}幅画" * 70, "关键词": ["画廊", "海神", f"画{i}"], "强度": 3}
        for i in range(5000)
    ]
    document = {"character_id": "large", "attributes": {"收藏": entries}}
    with warnings.catch_warnings():  # advice on the contents' length
        warnings.simplefilter("ignore", ConfigWarning)
        store_config(path, parse_designer_json(document))
    settings = ServiceSettings(api_key=KEY, header_timeout=1.0, send_timeout=3.0)
    app = create_app(path, embedder=None, settings=settings)
    with serving(app, timeout_keep_alive=30, **server_options(settings)) as client:
        yield client


def _ask_large(client: httpx.Client, receive_buffer: int | None = None) -> socket.socket:
    """A raw connection that asked for the large answer."""
    sock = socket.socket()
    if receive_buffer:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    sock.connect(("127.0.0.1", client.base_url.port))
    sock.sendall(b"GET /config/large HTTP/1.1\r\nHost: rolemem\r\nX-API-Key: game\r\n\r\n")
    return sock


@pytest.mark.parametrize("trickle", [0, 4096], ids=["reading-nothing", "reading-4-KiB-a-half-s"])
def test_an_answer_its_client_does_not_take_is_reset_after_the_send_deadline(large_answer, trickle):
    stalled = _ask_large(large_answer, receive_buffer=4096)
    started = time.monotonic()
    # meanwhile another client takes the same answer whole, and the probes answer
    whole = large_answer.get("/config/large", headers={"X-API-Key": KEY})
    assert whole.status_code == 200 and len(whole.content) > 8_000_000
    assert len(whole.json()["attributes"]["收藏"]) == 5000
    assert large_answer.get("/health").status_code == 200
    # reset (its buffers dropped): taking less than 32 KiB a second is as good as nothing
    with pytest.raises(ConnectionResetError):
        while time.monotonic() - started < 30:
            time.sleep(0.5)
            if stalled.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) or (
                trickle and not stalled.recv(trickle)
            ):
                raise ConnectionResetError
    assert time.monotonic() - started >= 1.0
    stalled.close()


def _taken_then_asked_again(client: httpx.Client, take: Any) -> None:
    """The large answer taken by `take(sock, body, length)` (the head read), then whole, and
    the next request on the connection answered: no 408 behind the answer."""
    sock = _ask_large(client, receive_buffer=65536)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    body = bytearray(rest)
    take(sock, body, length)
    while len(body) < length:
        body += sock.recv(length - len(body))
    assert len(json.loads(body)["attributes"]["收藏"]) == 5000
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: rolemem\r\n\r\n")
    status, _, answer = _answer(sock)
    assert (status, json.loads(answer)) == (200, {"status": "ok"})
    sock.close()


def test_a_slow_reader_takes_its_whole_answer_then_asks_again(large_answer):
    """1 MiB every 0.3 s (within the send deadline, past the header deadline in all) while the
    service still holds some of the answer, then at once what the kernel may hold: the
    header deadline begins once the service has sent the answer."""
    kernel_holds = int(open("/proc/sys/net/ipv4/tcp_wmem").read().split()[2]) + 2 * 65536

    def slowly(sock: socket.socket, body: bytearray, length: int) -> None:
        while len(body) < length - kernel_holds:
            time.sleep(0.3)
            target = min(length - kernel_holds, len(body) + 1024 * 1024)
            while len(body) < target:
                body += sock.recv(target - len(body))

    _taken_then_asked_again(large_answer, slowly)


def test_a_reader_pausing_on_the_kernels_part_of_its_answer_gets_it_whole_then_asks_again(
    large_answer,
):
    """Past the header deadline, the kernel's queue still holding part of the answer: the
    send deadline waits for it (a 408 was written behind the answer, the next request's)."""

    def pausing(sock: socket.socket, body: bytearray, length: int) -> None:
        while len(body) < length - 2_000_000:  # at once, but for what the kernel holds
            body += sock.recv(length - 2_000_000 - len(body))
        time.sleep(2)  # past the header deadline (1 s), within the send deadline (3 s)

    _taken_then_asked_again(large_answer, pausing)


def test_a_body_too_large_is_answered_413_at_once_and_the_connection_closed(service):
    sock = raw_connection(service)
    sock.sendall(
        b"POST /saves HTTP/1.1\r\nHost: rolemem\r\nX-API-Key: game\r\n"
        b"Content-Type: application/json\r\nContent-Length: 2000000\r\n\r\n{"
    )
    started = time.monotonic()
    status, headers, body = _answer(sock)  # the client stalls: the answer comes anyway
    assert time.monotonic() - started < 2
    assert status == 413 and headers["connection"] == "close"
    assert _error(body)["type"] == "PayloadTooLarge"
    assert _closed_within(sock, 10)  # after a bounded drain
    # a client that sends its large body reads the answer too
    answer = service.post(
        "/saves", headers={"X-API-Key": KEY}, content=b"[" + b"1," * 600_000 + b"1]"
    )
    assert answer.status_code == 413


def test_the_key_is_checked_before_the_body_is_read(service):
    sock = raw_connection(service)
    sock.sendall(
        b"POST /saves HTTP/1.1\r\nHost: rolemem\r\nContent-Type: application/json\r\n"
        b"Content-Length: 1000000\r\n\r\n"
    )
    started = time.monotonic()
    status, headers, body = _answer(sock)
    assert time.monotonic() - started < 2 and headers["connection"] == "close"
    assert (status, _error(body)) == (
        401,
        {
            "type": "Unauthorized",
            "message": "missing or wrong X-API-Key header",
            "field": "X-API-Key",
        },
    )
    sock.close()
    # no key and a body that is not even JSON: 401, not 422
    answer = service.post(
        "/saves", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert answer.status_code == 401 and error_of(answer)["type"] == "Unauthorized"
    # the open routes stay open
    assert service.get("/health").status_code == 200
    assert service.get("/console").status_code == 200


def _health_latencies(client: httpx.Client, count: int) -> list[float]:
    """`count` /health requests, each on a new connection; their latencies (all 200)."""
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        with httpx.Client(base_url=str(client.base_url), timeout=30) as fresh:
            assert fresh.get("/health").status_code == 200
        seconds.append(time.perf_counter() - started)
    return seconds


def _p95(seconds: list[float]) -> float:
    return statistics.quantiles(seconds, n=20)[-1]


def test_stalled_connections_do_not_stop_health(service):
    baseline = _health_latencies(service, 40)
    # three times the connection cap, each stalled in its headers
    stalled = []
    for _ in range(3 * SETTINGS.max_connections):
        sock = raw_connection(service)
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: ro")
        stalled.append(sock)
    loaded = _health_latencies(service, 40)
    print(
        f"\n/health p95 {_p95(baseline) * 1000:.1f} ms alone, {_p95(loaded) * 1000:.1f} ms "
        f"with {len(stalled)} stalled connections (cap {SETTINGS.max_connections})"
    )
    assert _p95(loaded) < 2
    # the cap closed the oldest; the header deadline closes the rest
    assert all(_closed_within(sock, 10) for sock in stalled)
    for sock in stalled:
        sock.close()


def test_health_answers_while_large_bodies_are_checked(service):
    # a 1 MiB JSON body of numbers: parsed and validated on the body lane, off the loop
    body = b"[" + b"1.5," * 200_000 + b"1.5]"
    stop = threading.Event()

    def post_large() -> None:
        with httpx.Client(base_url=str(service.base_url), timeout=60) as poster:
            while not stop.is_set():
                answer = poster.post(
                    "/saves",
                    content=body,
                    headers={"X-API-Key": KEY, "Content-Type": "application/json"},
                )
                assert answer.status_code == 422

    posters = [threading.Thread(target=post_large, daemon=True) for _ in range(4)]
    for thread in posters:
        thread.start()
    try:
        loaded = _health_latencies(service, 30)
    finally:
        stop.set()
        for thread in posters:
            thread.join(60)
    print(f"\n/health p95 {_p95(loaded) * 1000:.1f} ms while 4 clients post 1 MiB bodies")
    assert _p95(loaded) < 2


def test_a_large_body_gets_the_answers_a_small_one_gets(service):
    headers = {"X-API-Key": KEY}
    save = service.post("/saves", headers=headers, json={"user_id": "large-1"}).json()["save_id"]
    line = {"attribute": "user", "content": "海" * 5000}  # 15 KB of UTF-8 each
    # 60 lines, ~900 KB: parsed and validated on the lane, then stored as a small body is
    appended = service.post(
        f"/saves/{save}/lines", headers=headers, json={"user_id": "large-1", "lines": [line] * 60}
    )
    assert appended.status_code == 200, appended.text
    assert len(appended.json()["line_ids"]) == 60
    # refused by validation: the small body's error, naming the field
    for lines in ([{}] * 201, [{}] * 100_000):
        answer = service.post(
            f"/saves/{save}/lines", headers=headers, json={"user_id": "large-1", "lines": lines}
        )
        assert (answer.status_code, error_of(answer)["field"]) == (422, "lines")
        assert "at most 200 items" in error_of(answer)["message"]
    extra = {"user_id": "large-1", "lines": [line], "bogus": "x" * 100_000}
    answer = service.post(f"/saves/{save}/lines", headers=headers, json=extra)
    assert (answer.status_code, error_of(answer)) == (
        422,
        {
            "type": "ValidationError",
            "message": "bogus: Extra inputs are not permitted",
            "field": "bogus",
        },
    )
    # what the strict check refuses, deep in a large body, named as in a small one
    padding = '{"attribute": "user", "content": "' + "x" * 5000 + '"}, '
    for bad, field in [
        ('"x\\ud800"', "lines[30].content"),
        ('"x\\u0000"', "lines[30].content"),
        ("NaN", "lines[30].role_id"),
        (str(2**63), "lines[30].role_id"),
        ("1e400", "lines[30].role_id"),
    ]:
        key = "content" if "content" in field else "role_id"
        line_text = '{"attribute": "user", "content": "x", "' + key + '": ' + bad + "}"
        if key == "content":
            line_text = '{"attribute": "user", "content": ' + bad + "}"
        body = '{"user_id": "large-1", "lines": [' + padding * 30 + line_text + "]}"
        answer = service.post(
            f"/saves/{save}/lines",
            headers={**headers, "Content-Type": "application/json"},
            content=body.encode(),
        )
        assert (answer.status_code, error_of(answer)["field"]) == (422, field), bad
    # an emoji as its escaped surrogate pair is text like any other
    emoji = '{"attribute": "user", "content": "\\ud83d\\ude00"}'
    body = '{"user_id": "large-1", "lines": [' + padding * 30 + emoji + "]}"
    answer = service.post(
        f"/saves/{save}/lines",
        headers={**headers, "Content-Type": "application/json"},
        content=body.encode(),
    )
    assert answer.status_code == 200, answer.text
    # the lane's thread did the work (the app runs in this process)
    assert any(thread.name.startswith("rolemem-bodies") for thread in threading.enumerate())


def test_the_body_lane_runs_one_job_at_a_time_with_the_loop_free_between():
    """Jobs of large bodies: one at a time on the lane's one thread, each followed by a
    gap of GAP times its length in which the event loop runs; a request's later job
    (validation, after its parse) ahead of the first jobs waiting."""
    lane = BodyLane()
    done: list[tuple[str, float, float, str]] = []

    def job(name: str) -> str:
        started = time.monotonic()
        time.sleep(0.05)
        done.append((name, started, time.monotonic(), threading.current_thread().name))
        return name

    async def main() -> list[str]:
        first = asyncio.create_task(lane.run(job, "a"))
        await asyncio.sleep(0.01)  # "a" runs; the rest wait their turn
        waiting = [asyncio.create_task(lane.run(job, name)) for name in ("b", "c")]
        await asyncio.sleep(0)
        later = asyncio.create_task(lane.run(job, "a's validation", later=True))
        ticks = 0
        while not all(task.done() for task in [first, later, *waiting]):
            await asyncio.sleep(0.005)  # the loop, meanwhile
            ticks += 1
        assert ticks > 20  # it ran all along
        return [task.result() for task in [first, later, *waiting]]

    try:
        assert asyncio.run(main()) == ["a", "a's validation", "b", "c"]
    finally:
        lane.close()
    assert [name for name, *_ in done] == ["a", "a's validation", "b", "c"]
    assert len({thread for *_, thread in done}) == 1
    assert done[0][3].startswith("rolemem-bodies")
    for (_, started, ended, _), (_, following, _, _) in zip(done, done[1:], strict=False):
        assert following - ended >= GAP * (ended - started) * 0.99


def test_console_forbids_framing_and_foreign_scripts(service):
    answer = service.get("/console")
    policy = answer.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert answer.headers["x-frame-options"] == "DENY"


def test_redirects_do_not_echo_the_host_header(service):
    headers = {"X-API-Key": KEY, "Host": "evil.example"}
    answer = service.get("/saves/1/?a=b", headers=headers, follow_redirects=False)
    assert answer.status_code == 307 and answer.headers["location"] == "/saves/1?a=b"
    # never a scheme-relative //host location
    answer = service.get("//evil.example/", headers=headers, follow_redirects=False)
    assert answer.status_code == 404 and "location" not in answer.headers
