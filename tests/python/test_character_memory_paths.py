"""Character memory through dbt and the CLI: same SQL, same answers."""

from __future__ import annotations

import csv
import json

import duckdb
import pytest

from rolemem.character_memory import CharacterMemory, stored_config
from rolemem.character_memory.config import ConfigError, demo_config, read_seed_csvs
from rolemem.cli import main
from rolemem.text.tokens import tokenize

from .conftest import REPO, demo_store, run_dbt, seed_demo

REQUESTS = REPO / "seeds" / "recall" / "demo_recall_requests.csv"


def demo_requests() -> list[dict]:
    with open(REQUESTS, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_demo_request_tokens_are_what_the_tokenizer_says():
    for request in demo_requests():
        assert json.loads(request["tokens"]) == tokenize(request["text"])


@pytest.fixture(scope="module")
def seeded_db(tmp_path_factory) -> str:
    tmp = tmp_path_factory.mktemp("character")
    path = str(tmp / "rolemem.duckdb")
    seed_demo(path, tmp)
    run_dbt(path, tmp, "run", "--select", "+character_memory_prompts")
    return path


def test_dbt_blocks_equal_python_recall_from_the_same_database(seeded_db):
    with duckdb.connect(seeded_db) as con:
        batch = {
            row[0]: row[1:]
            for row in con.execute(
                "select request_id, attributes_text, events_text, dialogue_style_text "
                "from character_memory_blocks"
            ).fetchall()
        }
        memory = CharacterMemory(con, character_id="qiyu")
    for request in demo_requests():
        result = memory.session(f"r{request['request_id']}").recall(
            request["text"],
            json.loads(request["context"]),
            require_match=request["require_match"] == "true",
        )
        assert (result.attributes, result.events, result.dialogue_style) == batch[
            int(request["request_id"])
        ]


def test_dbt_prompts_equal_python_recall_with_the_same_template(seeded_db):
    """character_memory_prompts, built by dbt from the demo requests' templates, is what the
    Python recall fills with the same template (the turn's path)."""
    with duckdb.connect(seeded_db) as con:
        batch = {
            row[0]: (row[1], None if row[2] is None else (row[2], row[3]))
            for row in con.execute(
                "select request_id, system_prompt, prompt_before_dynamic, prompt_after_dynamic "
                "from character_memory_prompts"
            ).fetchall()
        }
        memory = CharacterMemory(con, character_id="qiyu")
    # one row per request; the third brings no template, so no prompt
    assert sorted(batch) == [1, 2, 3] and batch[3] == (None, None)
    for request in demo_requests():
        result = memory.session(f"p{request['request_id']}").recall(
            request["text"],
            json.loads(request["context"]),
            require_match=request["require_match"] == "true",
            template=request["template"] or None,
        )
        expected = batch[int(request["request_id"])]
        assert (result.system_prompt, result.prompt_around_dynamic) == expected


def test_database_without_config_tables_is_a_clear_error(tmp_path):
    with duckdb.connect(str(tmp_path / "empty.duckdb")) as con:
        with pytest.raises(Exception, match="has no config table 'character_attributes'"):
            CharacterMemory(con, character_id="qiyu")
        with pytest.raises(ConfigError, match="no config table 'character_attributes'"):
            stored_config(con, "qiyu")


def test_cli_recall_prints_the_blocks(capsys):
    code = main(
        [
            "recall",
            "--character",
            "qiyu",
            "--text",
            "今天的画真漂亮！",
            "--param",
            "intimacy=1",
            "--param",
            "scene=gallery",
            "--param",
            "time=day",
            "--param",
            "emotion=happy",
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["character_dialogue_style"] == (
        "-被你发现我的小心思了呢，这幅画可是为你准备的\n"
        "-谢谢你的夸奖，不过比起画作，我更想听听你的想法\n"
        "-这幅画的灵感来自于你的笑容，所以才会这么美\n"
    )
    assert main(["recall", "--character", "qiyu", "--text", "x", "--param", "oops"]) == 2
    assert capsys.readouterr().err == "rolemem: error: --param 'oops': expected FIELD=VALUE\n"


def test_cli_import_writes_nothing_on_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "character_id": "b",
                "attributes": {
                    "类": [{"关键词": ["a", "b", "c"], "内容": "内容足够长的一条属性", "强度": 9}]
                },
            }
        ),
        encoding="utf-8",
    )
    out = tmp_path / "seeds"
    assert main(["config", "import", str(bad), "--out", str(out)]) == 2
    assert "bad.json: attributes.类[0]: strength: must be 1-5, got 9" in capsys.readouterr().err
    assert not out.exists()


def test_cli_import_writes_csvs_that_load_back_as_the_same_config(tmp_path):
    data = REPO / "python" / "rolemem" / "data" / "characters"
    out = tmp_path / "seeds"
    assert (
        main(
            [
                "config",
                "import",
                str(data / "qiyu.json"),
                str(data / "qinling.json"),
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert (out / "character_attributes.csv").read_text("utf-8").splitlines()[:2] == [
        "ordinal,character_id,category,keywords,content,strength,query_params,"
        "secondary_keywords,secondary_logic,is_constant,sticky_turns",
        '1,qiyu,能力特征,"[""艺术"",""画画"",""创作""]",艺术天赋,5,'
        '"[{""field"":""exploration"",""value"":1,""operator"":""gte""}]",[],,false,',
    ]
    assert read_seed_csvs(out).tables == demo_config().tables


def test_config_load_writes_the_seeds_without_dbt(tmp_path, capsys):
    path = str(tmp_path / "nodbt.duckdb")
    assert main(["init-db", "--db", path]) == 0
    assert main(["config", "load", "--db", path]) == 0
    assert "tables into" in capsys.readouterr().out
    args = [
        "recall",
        "--character",
        "qiyu",
        "--text",
        "今天画画时你好温柔",
        "--param",
        "intimacy=2",
        "--param",
        "exploration=3",
        "--param",
        "scene=studio",
    ]
    assert main([*args, "--db", path]) == 0
    from_db = json.loads(capsys.readouterr().out)
    assert main(args) == 0
    assert from_db == json.loads(capsys.readouterr().out)
    assert from_db["character_memory_attributes"] == (
        "能力特征：艺术天赋、创作出独特的变色画作\n性格特征：温柔、内心温柔"
    )


def test_dbt_build_keeps_the_deployments_config(tmp_path, capsys):
    """An imported character is the deployment's config: `dbt build` reads it (the unlock
    matrix shows it) and replaces nothing."""

    path = str(tmp_path / "rolemem.duckdb")
    demo_store(path)
    designer = tmp_path / "innkeeper.json"
    designer.write_text(
        json.dumps(
            {
                "character_id": "innkeeper",
                "attributes": {
                    "爱好": [
                        {
                            "关键词": ["酒", "桂花"],
                            "内容": "最爱喝自家酿的桂花酒",
                            "强度": 4,
                            "queryParams": [{"field": "intimacy", "value": 3, "operator": "gte"}],
                        }
                    ]
                },
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    assert main(["config", "import", str(designer), "--db", path]) == 0
    assert "wrote 1 character_attributes" in capsys.readouterr().out
    run_dbt(
        path, tmp_path, "build", "--select", "+character_unlock_matrix", "--exclude", "tag:demo+"
    )
    with duckdb.connect(path, read_only=True) as con:
        assert con.execute(
            """select intimacy, exploration, is_unlocked from character_unlock_matrix
            where character_id = 'innkeeper' and intimacy in (2, 3) and exploration = 1
            order by intimacy"""
        ).fetchall() == [(2, 1, False), (3, 1, True)]
        assert con.execute(
            "select character_id, content from character_attributes "
            "where character_id = 'innkeeper'"
        ).fetchall() == [("innkeeper", "最爱喝自家酿的桂花酒")]
