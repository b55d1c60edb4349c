"""A game server's client generated from /openapi.json with the registry's own tool:
openapi-typescript 7 (default options) makes the types, TypeScript 5 compiles a small game
script against them with --strict, and node plays it against the service under uvicorn. The
types hold what the code does: fields with defaults optional, ids integers, exactly one of
role_id / script_role_id; the service refuses what they refuse, naming the field."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rolemem.service.core.settings import ServiceSettings

from .conftest import scripted_game

TOOLS = ("openapi-typescript@7", "typescript@5")

GAME = """
import type { components } from "./api";

type Schemas = components["schemas"];
const base = process.env.ROLEMEM_URL as string;

async function post<T>(route: string, body: unknown): Promise<T> {
  const answer = await fetch(base + route, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!answer.ok) throw new Error(`${route}: ${answer.status} ${await answer.text()}`);
  return (await answer.json()) as T;
}

async function main(): Promise<void> {
  const save: Schemas["SaveCreate"] = { user_id: "mumu", name: "第一章" };
  const created = await post<Schemas["Save"]>("/saves", save);
  const lines: Schemas["LinesAppend"] = {
    user_id: "mumu",
    lines: [
      { attribute: "user", content: "你好" },
      { attribute: "assistant", content: "你好呀", role_id: 1 },
    ],
  };
  await post<Schemas["LinesAppended"]>(`/saves/${created.save_id}/lines`, lines);
  // no dry_run, context, now or names: their defaults hold
  const turn: Schemas["TurnRequest"] = {
    save_id: created.save_id,
    user_id: "mumu",
    role_id: 1,
    message: "我们去海边吧",
  };
  const prompt = await post<Schemas["TurnResponse"]>("/turn", turn);
  console.log(JSON.stringify(prompt.messages.map((message) => message.role)));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
"""

# each must not compile: the types refuse what the service refuses
REFUSED = {
    "neither role_id nor script_role_id": (
        'const t: Schemas["TurnRequest"] = { save_id: 1, user_id: "u", message: "m" };'
    ),
    "a save id as text": (
        'const t: Schemas["TurnRequest"] = '
        '{ save_id: "1", user_id: "u", message: "m", role_id: 1 };'
    ),
}


@pytest.fixture(scope="module")
def tools(tmp_path_factory) -> Path:
    """openapi-typescript and tsc from the npm registry, installed once per machine."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node and npm are not on this machine: the typed-client test needs them")
    home = os.environ.get("ROLEMEM_CACHE_DIR") or str(Path.home() / ".cache" / "rolemem")
    folder = Path(home) / "npm" / "-".join(t.replace("@", "") for t in TOOLS)
    if not (folder / "node_modules" / ".bin" / "tsc").exists():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefix", str(folder), *TOOLS],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return folder / "node_modules" / ".bin"


@pytest.fixture(scope="module", params=["duckdb"])
def game(request, tmp_path_factory):
    settings = ServiceSettings()
    with scripted_game(request, tmp_path_factory, "rolemem_typed", settings=settings) as served:
        yield served


def _types(client, tools: Path, folder: Path) -> None:
    (folder / "openapi.json").write_text(json.dumps(client.get("/openapi.json").json()))
    subprocess.run(
        [str(tools / "openapi-typescript"), "openapi.json", "-o", "api.d.ts"],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=120,
    )


def _compile(tools: Path, folder: Path, name: str, source: str) -> subprocess.CompletedProcess:
    (folder / f"{name}.ts").write_text(source)
    return subprocess.run(
        [
            str(tools / "tsc"),
            "--strict",
            "--target",
            "es2022",
            "--module",
            "commonjs",
            "--lib",
            "es2022,dom",
            f"{name}.ts",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_a_generated_client_compiles_strictly_and_plays(game, tools, tmp_path):
    client, _, _ = game
    _types(client, tools, tmp_path)
    # fetch's types are the DOM library's; node's `process` is declared (no @types/node)
    header = "declare const process: { env: Record<string, string>; exit(code: number): never };\n"
    compiled = _compile(tools, tmp_path, "game", header + GAME)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    played = subprocess.run(
        ["node", "game.js"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "ROLEMEM_URL": str(client.base_url).rstrip("/")},
    )
    assert played.returncode == 0, played.stderr
    assert json.loads(played.stdout) == ["system", "user", "assistant", "user"]


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_types_refuse_what_the_service_refuses(game, tools, tmp_path, case):
    client, _, _ = game
    _types(client, tools, tmp_path)
    source = 'import type { components } from "./api";\n'
    source += 'type Schemas = components["schemas"];\n' + REFUSED[case] + "\n"
    assert _compile(tools, tmp_path, "refused", source).returncode != 0


def test_the_service_refuses_them_naming_the_field(game):
    client, _, _ = game
    save = client.post("/saves", json={"user_id": "aya"}).json()["save_id"]
    body = {"save_id": save, "user_id": "aya", "message": "你好"}
    neither = client.post("/turn", json=body)
    assert (neither.status_code, neither.json()["error"]["field"]) == (422, "role_id")
    assert "exactly one of role_id or script_role_id" in neither.json()["error"]["message"]
    both = client.post("/turn", json={**body, "role_id": 1, "script_role_id": "7"})
    assert (both.status_code, both.json()["error"]["field"]) == (422, "role_id")
    text_id = client.post("/turn", json={**body, "save_id": str(save), "role_id": 1})
    assert (text_id.status_code, text_id.json()["error"]["field"]) == (422, "save_id")
    flag = client.post("/turn", json={**body, "role_id": 1, "dry_run": 0})
    assert (flag.status_code, flag.json()["error"]["field"]) == (422, "dry_run")


PYTHON_GAME = """
from rolemem_client import Client
from rolemem_client.api.saves import append_lines_saves_save_id_lines_post as append
from rolemem_client.api.saves import create_save_saves_post as create_save
from rolemem_client.api.turn import turn_turn_post as turn
from rolemem_client.models import (
    ErrorBody, LineIn, LineInAttribute, LinesAppend, SaveCreate, TurnRequestType0,
)

client = Client(base_url=BASE, raise_on_unexpected_status=True)
save = create_save.sync(client=client, body=SaveCreate(user_id="mumu", name="第一章"))
lines = [
    LineIn(attribute=LineInAttribute.USER, content="你好"),
    LineIn(attribute=LineInAttribute.ASSISTANT, content="你好呀", role_id=1),
]
body = LinesAppend(lines=lines, user_id="mumu")
appended = append.sync(client=client, save_id=save.save_id, body=body)
# no dry_run, context, now or names: their defaults hold
said = dict(save_id=save.save_id, role_id=1, message="我们去海边吧")
prompt = turn.sync(client=client, body=TurnRequestType0(user_id="mumu", **said))
other = turn.sync(client=client, body=TurnRequestType0(user_id="aya", **said))
assert isinstance(other, ErrorBody)
roles = [message.role.value for message in prompt.messages]
print(roles, len(appended.line_ids), (other.error.type_, other.error.field))
"""


@pytest.fixture(scope="module")
def generator() -> Path:
    """openapi-python-client, the registry's generator (the `dev` extra installs it)."""
    found = shutil.which("openapi-python-client", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("openapi-python-client is not installed (pip install -e '.[dev]')")
    return Path(found)


def test_a_generated_python_client_plays_the_lifecycle(game, generator, tmp_path):
    """The one endpoint it leaves out is the bulk import (no generator reads x-ndjson)."""
    client, _, _ = game
    (tmp_path / "openapi.json").write_text(json.dumps(client.get("/openapi.json").json()))
    generated = subprocess.run(
        [str(generator), "generate", "--path", "openapi.json", "--meta", "none"]
        + ["--output-path", "rolemem_client"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    said = (generated.stdout + generated.stderr).splitlines()
    skipped = [line for line in said if line.startswith("WARNING")]
    # the import's NDJSON, and a SillyTavern lorebook (three layouts of SillyTavern's JSON,
    # a union openapi-python-client does not read): a game sends those with any HTTP client
    assert skipped == [
        "WARNING parsing POST /saves/{save_id}/import within saves. "
        "Endpoint will not be generated.",
        "WARNING parsing POST /config/import/sillytavern/{character_id} within "
        "designers_character_config. Endpoint will not be generated.",
    ]
    base = repr(str(client.base_url).rstrip("/"))
    played = subprocess.run(
        [sys.executable, "-c", f"BASE = {base}\n" + PYTHON_GAME],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert played.returncode == 0, played.stderr
    assert played.stdout.strip() == (
        "['system', 'user', 'assistant', 'user'] 2 ('SaveNotFoundError', 'save_id')"
    )
