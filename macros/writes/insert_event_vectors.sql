{#
    Events' vectors, one row per position of the bound lists: the event, its player (null: an
    official event, into `table` official_event_embedding) and one list of vectors per vector
    column, each read as double precision and stored as the column's reals (as a vector bound
    alone is).
#}
{% macro insert_event_vectors(columns, table='memory_event_embedding') -%}
    {{- adapter.dispatch('insert_event_vectors', 'rolemem')(columns, table) -}}
{%- endmacro %}

{% macro default__insert_event_vectors(columns, table) -%}
    insert into {{ table }} (event_id, user_id, {{ columns | join(', ') }})
    select
        unnest(cast($event_id as bigint[])) as event_id,
        unnest(cast($user_id as varchar[])) as user_id
        {%- for column in columns %},
        unnest(cast(${{ column }} as double[][])) as {{ column }}
        {%- endfor %}
{%- endmacro %}

{#
    PostgreSQL's arrays are rectangular and its unnest flattens every dimension: each vector
    travels as JSON text (as a request's list fields do) and becomes a list per row.
#}
{% macro postgres__insert_event_vectors(columns, table) -%}
    insert into {{ table }} (event_id, user_id, {{ columns | join(', ') }})
    select
        event_id,
        user_id
        {%- for column in columns %},
        cast({{ json_text_list('cast(' ~ column ~ ' as json)') }} as double[]) as {{ column }}
        {%- endfor %}
    from (
        select
            unnest(cast($event_id as bigint[])) as event_id,
            unnest(cast($user_id as varchar[])) as user_id
            {%- for column in columns %},
            unnest(cast(${{ column }} as varchar[])) as {{ column }}
            {%- endfor %}
    ) as new_vectors
{%- endmacro %}
