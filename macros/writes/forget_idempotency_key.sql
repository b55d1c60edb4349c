{#
    A key's record once it expired, so the key may be used again.
#}
{% macro forget_idempotency_key() -%}
    delete from rolemem_idempotency
    where key = $key and created_at < $expired
{%- endmacro %}
