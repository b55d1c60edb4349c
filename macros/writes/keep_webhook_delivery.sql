{#
    A webhook delivery that failed its last retry, kept to be replayed; failing again after a
    replay, its attempts grow and its error is the latest.
#}
{% macro keep_webhook_delivery() -%}
    insert into rolemem_webhook_delivery (
        event_id, url, event_type, body, attempts, last_error, failed_at
    )
    values ($event_id, $url, $event_type, $body, $attempts, $error, $now)
    on conflict (event_id, url) do update set
        attempts = rolemem_webhook_delivery.attempts + 1,
        last_error = excluded.last_error,
        failed_at = excluded.failed_at
{%- endmacro %}
