{#
    Every idempotency record older than the retention (maintenance); one row answered per
    deleted record.
#}
{% macro forget_expired_idempotency() -%}
    delete from rolemem_idempotency
    where created_at < $expired
    returning 1
{%- endmacro %}
