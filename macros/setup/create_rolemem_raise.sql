{#
    What rolemem_raise needs on the engine, created before models run (on-run-start) and by
    rolemem.engines when it connects: on PostgreSQL a function that raises its message (typed
    as text; `stable`, so the planner never folds a call with constant arguments). DuckDB has
    error() built in.
#}
{% macro create_rolemem_raise() -%}
    {{- adapter.dispatch('create_rolemem_raise', 'rolemem')() -}}
{%- endmacro %}

{% macro default__create_rolemem_raise() -%}
    select 1
{%- endmacro %}

{% macro postgres__create_rolemem_raise() -%}
    create or replace function rolemem_raise(message text) returns text
    language plpgsql stable as $$
    begin
        raise exception using message = message;
    end
    $$
{%- endmacro %}
