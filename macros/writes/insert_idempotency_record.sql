{#
    The first answer to a request with an idempotency key, replayed to its retries.
#}
{% macro insert_idempotency_record() -%}
    insert into rolemem_idempotency (key, user_id, request_hash, response, created_at)
    values ($key, $user_id, $hash, $response, $now)
{%- endmacro %}
