{#
    A reproducible pseudo-random number in [0, 2147483647) per (id, seed): two rounds of the
    Lehmer (MINSTD) generator, plain integer arithmetic that every engine computes alike (an
    engine's own hash() differs from another's, and a draw must not depend on the engine).
    Both as bigint: the absolute value of the smallest integer seed overflows an integer.
#}
{% macro roulette_hash(id, seed) -%}
    ((((abs(cast({{ id }} as bigint)) % 2147483647) * 48271
        + abs(cast({{ seed }} as bigint)) % 2147483647) % 2147483647) * 48271 % 2147483647)
{%- endmacro %}
