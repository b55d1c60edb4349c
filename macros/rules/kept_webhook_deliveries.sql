{#
    The webhook deliveries kept after their retries failed, oldest failure first: what a
    replay sends again.
#}
{% macro kept_webhook_deliveries() -%}
    select url, body from rolemem_webhook_delivery
    order by failed_at
{%- endmacro %}
