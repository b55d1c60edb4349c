{#
    The two roles every synthetic dialogue speaks with (tests/python/synthetic_dialogue.py).
#}
{% macro insert_synthetic_roles() -%}
    insert into role (id, name)
    values (1, '钦灵'), (2, '莉莉')
    on conflict do nothing
{%- endmacro %}
