"""The service's contract (issues 16, 17): one error shape for every non-2xx, every operation and
field documented, docs that work offline, and no 500 for any input: every route in
/openapi.json walked with lone surrogates, NUL characters, NaN, huge integers, unknown fields,
oversized text and 5 MB bodies, each answered 4xx in the error shape with nothing written, on
both engines."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest

from rolemem.character_memory.contract import ENTRIES
from rolemem.service import create_app
from rolemem.service.core.settings import ServiceSettings

from .conftest import demo_store, demo_store_on, error_of, serving

KEY = {"X-API-Key": "game"}
DESIGNER = {"X-API-Key": "designer"}


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def service(request, tmp_path_factory):
    """The service on the demo store, over the embedded file and over PostgreSQL."""
    folder = tmp_path_factory.mktemp("contract")
    path = demo_store_on(request, tmp_path_factory, "rolemem_contract")
    app = create_app(
        path,
        embedder=None,
        snapshot_path=str(folder / "snapshot.duckdb"),
        settings=ServiceSettings(api_key="game", designer_key="designer"),
    )
    with serving(app) as client:
        yield client, app


@pytest.fixture(scope="module")
def spec(service) -> dict[str, Any]:
    client, _ = service
    return client.get("/openapi.json").json()


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def test_every_operation_is_described_with_its_errors_and_a_typed_answer(spec):
    operations = [
        (path, method, operation)
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
    ]
    assert len(operations) == 48
    for path, method, operation in operations:
        where = f"{method.upper()} {path}"
        assert operation.get("summary") and operation.get("description"), where
        answers = operation["responses"]
        success = next(code for code in answers if code.startswith("2"))
        if path == "/metrics":  # Prometheus' text format, no key
            assert set(answers[success]["content"]) == {"text/plain"}, where
            continue
        assert "$ref" in json.dumps(answers[success]["content"]["application/json"]), where
        if path in ("/health", "/ready"):  # the probes: no key, no input
            continue
        takes_input = operation.get("parameters") or operation.get("requestBody")
        assert {"401", "422"} <= set(answers) if takes_input else "401" in answers, where
        for code, answer in answers.items():
            if code.startswith("4") or code.startswith("5"):
                shape = answer["content"]["application/json"]["schema"]["$ref"]
                assert shape.endswith("/ErrorBody"), (where, code)
        for parameter in operation.get("parameters", []):
            assert parameter.get("description"), (where, parameter["name"])


def test_a_designer_entry_is_one_contract_in_and_out(spec):
    """/config/import's entries and GET /config/{id}'s are the import's models (issue 44)."""
    schemas = spec["components"]["schemas"]
    for kind, model in ENTRIES.items():
        names = {field.alias or name for name, field in model.model_fields.items()}
        taken = schemas["DesignerConfigIn"]["properties"][kind]["additionalProperties"]
        assert set(taken["items"]["properties"]) == names
        given = _resolve(
            spec, schemas["DesignerConfig"]["properties"][kind]["additionalProperties"]["items"]
        )
        assert set(given["properties"]) == names - {"extensions"}  # carried, not exported


def test_every_field_is_described_with_an_example_and_text_is_bounded(spec):
    for name, schema in spec["components"]["schemas"].items():
        if name in ("HTTPValidationError", "ValidationError"):
            continue  # FastAPI's own, never sent: validation errors use ErrorBody
        for field, definition in schema.get("properties", {}).items():
            assert definition.get("description"), (name, field)
            assert "examples" in definition or "example" in definition, (name, field)
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            body = operation.get("requestBody")
            if not body:
                continue
            (content,) = body["content"].values()  # JSON, or a bulk import's ndjson lines
            schema = _resolve(spec, content["schema"])
            for field, definition in schema.get("properties", {}).items():
                texts = [
                    option
                    for option in definition.get("anyOf", [definition])
                    if option.get("type") == "string"
                    and "format" not in option
                    and "enum" not in option
                    and "const" not in option
                ]
                for option in texts:
                    assert "maxLength" in option, (method, path, field)


def _bounds(schema: Any) -> list[Any]:
    if isinstance(schema, list):
        return [bound for item in schema for bound in _bounds(item)]
    if not isinstance(schema, dict):
        return []
    keys = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    own = [schema[key] for key in keys if key in schema and "integer" in str(schema.get("type"))]
    return own + [bound for value in schema.values() for bound in _bounds(value)]


def test_64_bit_bounds_are_exact_integers(spec):
    """A bound past 2**53 written as a float (9.223372036854776e+18) reads, as a decimal, past
    64 bits: every such bound is the integer itself."""
    bounds = _bounds(spec)
    assert {2**63 - 1, -(2**63)} <= set(bounds)
    assert all(isinstance(bound, int) for bound in bounds if abs(bound) > 2**53)


def test_the_docs_work_offline(service):
    client, _ = service
    for page in ("/docs", "/redoc"):
        html = client.get(page).text
        assert "http://" not in html and "https://" not in html.replace("https://github.com", ""), (
            page
        )
    swagger = client.get("/docs").text
    for asset in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert f"/docs-assets/{asset}" in swagger
        answer = client.get(f"/docs-assets/{asset}")
        assert answer.status_code == 200 and len(answer.content) > 100_000
    assert client.get("/docs-assets/redoc.standalone.js").status_code == 200


def test_every_failure_has_the_one_shape(service):
    client, _ = service
    cases = [
        (client.get("/nowhere", headers=KEY), 404, "NotFound"),
        (client.delete("/health"), 405, "MethodNotAllowed"),
        (client.post("/query", headers=KEY, json={"query": "x"}), 422, "ValidationError"),
        (
            client.post(
                "/query", headers={**KEY, "content-type": "application/json"}, content=b"{oops"
            ),
            422,
            "ValidationError",
        ),
        (client.post("/query", json={}), 401, "Unauthorized"),
        (client.get("/saves/999", headers=KEY), 404, "SaveNotFoundError"),
        (
            client.post(
                "/query",
                headers={**KEY, "content-type": "application/json"},
                content=b'{"query": "' + b"x" * 2_000_000 + b'"}',
            ),
            413,
            "PayloadTooLarge",
        ),
    ]
    for answer, status, kind in cases:
        assert answer.status_code == status, answer.text
        error = error_of(answer)
        assert kind is None or error["type"] == kind, error
    missing = error_of(client.post("/query", headers=KEY, json={"query": "x"}))
    assert missing == {
        "type": "ValidationError",
        "message": "user_id: is required",
        "field": "user_id",
    }


def test_a_5_mb_body_is_refused_at_once(service):
    client, _ = service
    body = json.dumps({"message": "长" * 1_700_000}).encode()
    assert len(body) > 5_000_000
    started = time.monotonic()
    answer = client.post("/turn", headers={**KEY, "content-type": "application/json"}, content=body)
    assert time.monotonic() - started < 2
    assert answer.status_code == 413
    assert error_of(answer)["type"] == "PayloadTooLarge"


# -- every route, every bad value -------------------------------------------------------------

# raw JSON text: a lone surrogate as its escape, NaN and numbers past 64 bits as literals
BAD_VALUES = {
    "lone surrogate": '"x\\ud800"',
    "NUL character": '"x\\u0000y"',
    "NaN": "NaN",
    "infinity": "-Infinity",
    "huge number": "1e400",
    "huge integer": str(2**70),
    "64-bit overflow": str(2**63),
    "long text": json.dumps("字" * 30_000),
    "empty text": '""',
    "list of huge integers": f"[{2**70}]",
    "wrong type": '{"a": []}',
}


def _bad_parameters(parameter: dict[str, Any]) -> list[str]:
    """Values the parameter never takes: past its type, range or length."""
    options = parameter["schema"].get("anyOf", [parameter["schema"]])
    number = next((option for option in options if option.get("type") == "integer"), None)
    if number is None:
        return ["x" * 5000]
    bounds = [str(number["minimum"] - 1)] if "minimum" in number else []
    bounds += [str(number["maximum"] + 1)] if "maximum" in number else []
    return [str(2**70), "abc", "NaN", *bounds]


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (path, method, operation)
        for path, methods in spec["paths"].items()
        for method, operation in methods.items()
        if path != "/health"
    ]


def _with(path: str, operation: dict[str, Any], name: str, value: str) -> str:
    """The valid URL with one parameter replaced by `value`."""
    url = _valid_path(path.replace("{" + name + "}", value), operation)
    return url


def _counts(app) -> dict[str, int]:
    """Rows per table of the store (the embedded file's, or the PostgreSQL database's)."""
    engine = app.state.store.engine
    listing = (
        "select table_name from duckdb_tables()"
        if engine.name == "duckdb"
        else "select table_name from information_schema.tables where table_schema = 'public'"
    )
    tables = [row[0] for row in engine.run(listing, {})]
    return {t: engine.run(f'select count(*) from "{t}"', {})[0][0] for t in tables}


def _headers(path: str) -> dict[str, str]:
    designer = path.startswith(("/official", "/config"))
    return {**(DESIGNER if designer else KEY), "content-type": "application/json"}


def _valid_path(path: str, operation: dict[str, Any]) -> str:
    samples = {
        "save_id": "2",
        "user_id": "mumu",
        "agent_id": "qiyu",
        "kind": "event",
        "memory_id": "1",
        "character_id": "qiyu",
    }
    for parameter in operation.get("parameters", []):
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", samples[parameter["name"]])
    return path


def test_no_input_is_a_500_and_a_refused_request_writes_nothing(service, spec):
    client, app = service
    before = _counts(app)
    seen = 0
    for path, method, operation in _operations(spec):
        body_schema = operation.get("requestBody", {}).get("content", {})
        url = _valid_path(path, operation)
        attempts: list[tuple[str, str, bytes | None]] = []
        body = b"{}" if body_schema else None
        for parameter in operation.get("parameters", []):
            for value in _bad_parameters(parameter):
                if parameter["in"] == "path":
                    attempts.append(
                        (method, _with(path, operation, parameter["name"], value), body)
                    )
                elif parameter["in"] == "query":
                    attempts.append((method, f"{url}?{parameter['name']}={value}", body))
        # JSON, or a bulk import's ndjson lines (each of these bodies: one line)
        (content_type,) = body_schema or ["application/json"]
        if body_schema:
            schema = _resolve(spec, body_schema[content_type]["schema"])
            fields = list(schema.get("properties", {})) or ["character_id"]
            for field in fields:
                for value in BAD_VALUES.values():
                    attempts.append((method, url, f'{{"{field}": {value}}}'.encode()))
            attempts.append((method, url, b'{"unknown_field": 1}'))
            attempts.append((method, url, b"[]"))
            attempts.append((method, url, b'{"a": ' * 5000 + b"1" + b"}" * 5000))
        for verb, target, content in attempts:
            headers = {**_headers(path), "content-type": content_type}
            answer = client.request(verb, target, headers=headers, content=content)
            assert 400 <= answer.status_code < 500, (
                verb,
                target,
                content and content[:80],
                answer.text,
            )
            error_of(answer)
            seen += 1
    assert seen > 500
    assert _counts(app) == before


def test_work_past_its_time_budget_is_a_503(tmp_path):
    path = str(tmp_path / "slow.duckdb")
    demo_store(path)
    app = create_app(path, embedder=None, settings=ServiceSettings(request_timeout=0.001))
    with serving(app) as client:
        answer = client.post(
            "/turn",
            json={
                "save_id": 2,
                "character_id": "qiyu",
                "role_id": 1,
                "user_id": "mumu",
                "message": "今天画画时你好温柔",
            },
        )
        assert answer.status_code == 503
        assert error_of(answer) == {
            "type": "BusyError",
            "message": "the request took longer than its time budget (0.001 s); try again",
        }
        # a read has the budget too (here behind a busy request pool); an export not, as large
        # as what it exports: it waits its turn on the exports' one thread
        store, gate = app.state.store, threading.Event()
        for _ in range(store.settings.request_threads):
            store.requests.submit(gate.wait, 10)
        store.exports.submit(gate.wait, 10)
        read = client.get("/saves/2", params={"user_id": "mumu"})
        threading.Timer(0.5, gate.set).start()
        export = client.get("/config/qiyu")
        assert (read.status_code, error_of(read)["message"]) == (
            503,
            "the request took longer than its time budget (0.001 s); try again",
        )
        assert (export.status_code, export.json()["character_id"]) == (200, "qiyu")
        # the service goes on
        assert client.get("/health").status_code == 200


def test_a_read_whose_client_leaves_while_it_waits_never_runs(tmp_path, monkeypatch):
    """Config exports run one at a time: one abandoned while another runs is never built."""
    from rolemem.service.api.routes import config

    path = str(tmp_path / "gone.duckdb")
    demo_store(path)
    app = create_app(path, embedder=None)
    built: list[str] = []
    document = config._document
    monkeypatch.setattr(
        config,
        "_document",
        lambda store, character_id: built.append(character_id) or document(store, character_id),
    )
    with serving(app) as client:
        gate = threading.Event()
        app.state.store.exports.submit(gate.wait, 10)  # the export before them, running
        with httpx.Client(base_url=client.base_url, timeout=0.3) as impatient:
            for route in ("/config/qiyu", "/config/qiyu/sillytavern"):
                with pytest.raises(httpx.TimeoutException):
                    impatient.get(route)
        time.sleep(1)  # the service notices the clients are gone
        gate.set()
        assert client.get("/config/qiyu").status_code == 200
    assert built == ["qiyu"]


def test_a_client_that_leaves_stops_its_work(tmp_path):
    """A recall whose client hangs up is interrupted: its next statement is refused."""
    import threading

    from rolemem.errors import BusyError

    path = str(tmp_path / "gone.duckdb")
    demo_store(path)
    app = create_app(path, embedder=None)
    with serving(app) as client:
        store = app.state.store
        gate, outcome = threading.Event(), []
        original = store.memory.query

        def slow_query(*args, **kwargs):
            gate.wait(10)  # the client leaves meanwhile
            try:
                return original(*args, **kwargs)
            except BusyError as exc:
                outcome.append(str(exc))
                raise

        store.memory.query = slow_query
        with httpx.Client(base_url=client.base_url, timeout=0.3) as impatient:
            with pytest.raises(httpx.TimeoutException):
                impatient.post(
                    "/query", json={"query": "火锅", "user_id": "mumu", "agent_id": "qiyu"}
                )
        time.sleep(1)  # the service notices the client is gone
        gate.set()
        deadline = time.monotonic() + 10
        while not outcome and time.monotonic() < deadline:
            time.sleep(0.05)
        store.memory.query = original
    assert outcome == ["the client went away"]
