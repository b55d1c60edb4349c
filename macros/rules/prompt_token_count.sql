{#
    The prompt's one token count: every character outside ASCII (a CJK character, kana, a
    full-width mark) counts 1, ASCII counts 1 per 4 characters (rounded up): a
    model-independent estimate, close to the BPE tokenizers' for Chinese and English, that
    SQL computes on both engines. The count of two texts joined is never more than the sum
    of their counts (the ASCII share rounds up once), so a sum of pieces' counts bounds the
    count of the prompt they make. A null text counts 0.
    With n characters of which m are outside ASCII, m + ceil((n - m) / 4) is
    ceil((n + 3m) / 4): one regexp per text (the costly part), not two.
#}
{% macro prompt_token_count(text) -%}
    coalesce(
        cast(
            ceil(
                (
                    length({{ text }})
                    + 3 * length(regexp_replace({{ text }}, '[\x01-\x7f]', '', 'g'))
                ) / 4.0
            )
            as integer
        ),
        0
    )
{%- endmacro %}
