"""The customer's two examples from memory-builder.md, exactly."""

from rolemem import build_memory

EXAMPLE_1_RESULT = [
    {"role": "system", "content": "你叫钦灵，进行角色扮演"},
    {"role": "user", "content": "你好呀钦灵"},
    {
        "role": "assistant",
        # the spec prints 【开兴】: a typo for the line's own emotion 开心
        "content": "【开心】你好呀莱姆，怎么今天来找我玩啦<こんにちは、ライム、今日はどうして遊びに来たの>"
        "（轻轻地摇了摇尾巴）【好奇】怎么样，今天的作业写完了吗？<どうだ、今日の宿題は終わった？>"
        "【担心】新的老师可严格了听说...<新しい先生は聞いた通り、厳しいです...>",
    },
    {"role": "user", "content": "没事啦，昨天已经搞定了"},
    {
        "role": "assistant",
        "content": "【无奈】呜呜，我还没写完呢...<うう、まだ書き終わってないの...>（轻轻地叹了口气）"
        "【调皮】那个，你的作业给我看看怎么样呀？<あの、あなたの宿題を見てどうですか？>",
    },
]

EXAMPLE_2_RESULT = [
    {"role": "system", "content": "你叫钦灵，进行角色扮演"},
    {"role": "user", "content": "{旁白：圣诞节到了，莱姆来到了钦灵的家里}"},
    {
        "role": "assistant",
        "content": "【惊讶】哇，莱姆，你怎么来了？<ワア、ライム、どうして来たの？>"
        "【尴尬】我衣服还没换好呢，不要看啦！<まだ服を着替えてないから、見ないでね！>",
    },
    {
        "role": "user",
        "content": "{旁白：只见钦灵连忙躲到了一只白色猫娘的背后，瑟瑟发抖着}\n"
        "啊啊，你怎么只穿内衣啊！赶紧穿上啦，我回避一下！",
    },
    {
        "role": "assistant",
        "content": "【难为情】谁知道你提前一个小时就来了！<なんだか早く来たなって、知らなかったよ！>",
    },
    {
        "role": "user",
        "content": "{白小喵：你好呀莱姆，我在帮钦灵挑衣服呢~\n莱姆：你是帮她挑衣服还是脱衣服啊...\n"
        "白小喵：不是啦，谁让你来这么巧刚准备换呢。}\n真是的...钦灵酱，换好了吗？",
    },
    {"role": "assistant", "content": "【难为情】好啦..<はい、はい..>"},
]


def test_example_1_one_to_one_chat(example_1):
    assert build_memory(example_1, display_name="钦灵") == EXAMPLE_1_RESULT


def test_example_2_multi_character_scene_as_printed(example_2):
    assert build_memory(example_2, role_id=1, context_emotion=False) == EXAMPLE_2_RESULT


def test_example_2_default_keeps_background_emotion(example_2):
    expected = [dict(message) for message in EXAMPLE_2_RESULT]
    expected[5]["content"] = (
        "{白小喵：【开心】你好呀莱姆，我在帮钦灵挑衣服呢~\n莱姆：你是帮她挑衣服还是脱衣服啊...\n"
        "白小喵：【开心】不是啦，谁让你来这么巧刚准备换呢。}\n真是的...钦灵酱，换好了吗？"
    )
    assert build_memory(example_2, role_id=1) == expected


def test_example_2_seen_by_the_script_npc(example_2):
    """白小喵 (script_role_id 1) gets its own system prompt; 钦灵 becomes background, and the
    last segment has no focus because another character spoke after the player."""
    assert build_memory(example_2, script_role_id=1, context_emotion=False) == [
        {"role": "system", "content": "你叫白小喵，进行角色扮演"},
        {
            "role": "user",
            "content": "{旁白：圣诞节到了，莱姆来到了钦灵的家里\n钦灵：哇，莱姆，你怎么来了？\n"
            "钦灵：我衣服还没换好呢，不要看啦！\n旁白：只见钦灵连忙躲到了一只白色猫娘的背后，瑟瑟发抖着\n"
            "莱姆：啊啊，你怎么只穿内衣啊！\n莱姆：赶紧穿上啦，我回避一下！\n钦灵：谁知道你提前一个小时就来了！}",
        },
        {
            "role": "assistant",
            "content": "【开心】你好呀莱姆，我在帮钦灵挑衣服呢~<こんにちは、ライム、きんりょうの服を選んでるんです~>",
        },
        {"role": "user", "content": "你是帮她挑衣服还是脱衣服啊..."},
        {
            "role": "assistant",
            "content": "【开心】不是啦，谁让你来这么巧刚准备换呢。"
            "<そういうわけじゃないですよ、きんりょうが服を変えるのを待ってたんです>",
        },
        {"role": "user", "content": "{莱姆：真是的...\n莱姆：钦灵酱，换好了吗？\n钦灵：好啦..}"},
    ]
