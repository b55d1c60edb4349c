{#
    The joins the branch rule (macro is_event_in_scope, its default arguments) reads for each
    event of a query: its last line on the query's chain (`query_chains`), its root line there
    (`tree_roots`: the same dialogue tree), and its batch among the replacements the chain hides
    (`hidden_batches`; none: the players have no replacement batch, no join). `query_id`: the
    query's key in the select; `events`: the events' alias.
#}
{% macro event_scope_joins(
    query_id, events='events', query_chains='query_chains', hidden_batches='hidden_batches'
) -%}
    left join {{ query_chains }} as query_chains
        on
            query_chains.query_id = {{ query_id }}
            and query_chains.line_id = {{ events }}.last_line_id
    left join {{ query_chains }} as tree_roots
        on
            tree_roots.query_id = {{ query_id }}
            and tree_roots.line_id = {{ events }}.root_line_id
    {%- if hidden_batches %}
        left join {{ hidden_batches }} as hidden_batches
            on
                hidden_batches.query_id = {{ query_id }}
                and hidden_batches.batch_key = {{ events }}.batch_key
    {%- endif %}
{%- endmacro %}
