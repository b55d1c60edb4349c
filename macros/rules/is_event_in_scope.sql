{#
    The branch rule of dynamic recall: whether a query may see an event. A memory belongs to
    the lines it came from (memory_event_line): every one of them is an ancestor of its last
    line, so its lines are all on the queried save's chain exactly when its last line is
    (`chain_line_id`: that line, joined from the query's chain, or null). Such an event shows,
    unless it is a replacement whose original shows there (`hidden_batch_key`: its batch,
    joined from the batches a line of the chain hides, or null; none: the players have no
    replacement batch). An event cut off the chain
    (its last line on another branch of this dialogue tree: a fork, a regenerated reply, a
    reloaded-away stretch) never shows; the tree is the chain's first line
    (`root_line_id_on_chain`: the event's root line, joined from the query's chain, or null).
    With memory_scope 'player', an event of another tree (another playthrough) shows too.
    An event with no source save (added by hand) always shows. Events written before they
    kept their tree follow the rule they were written under: another save of the player off
    the query's lineage (the saves its chain passes through) shows. Nothing is deleted: go
    back and a hidden event returns. The defaults read the joins of macro event_scope_joins.
#}
{% macro is_event_in_scope(
    event,
    query,
    chain_line_id='query_chains.line_id',
    root_line_id_on_chain='tree_roots.line_id',
    hidden_batch_key='hidden_batches.batch_key'
) -%}
    (
        {{ event }}.save_id is null
        or (
            {{ chain_line_id }} is not null
            {%- if hidden_batch_key %} and {{ hidden_batch_key }} is null{% endif %}
        )
        or (
            {{ query }}.memory_scope = 'player'
            and {{ root_line_id_on_chain }} is null
            and (
                {{ event }}.root_line_id is not null
                or (
                    ({{ query }}.save_id is null or {{ event }}.save_id <> {{ query }}.save_id)
                    and not coalesce(
                        {{ list_has(query ~ '.lineage_save_ids', event ~ '.save_id') }}, false
                    )
                )
            )
        )
    )
{%- endmacro %}
