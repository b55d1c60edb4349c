{#
    An entity mentioned again, merged into the row of the same (scope, agent, player, entity,
    kind, keyword): its description appended unless already there (merge_count counts the
    appends, consolidation rewrites them), its strength grown by the spacing increment.
    A description never grows past memory_length(): an append that would is made room for by
    dropping the oldest appended parts, whole, at the separator '；' (the newest text kept),
    and a new description that leaves no room for any replaces the old.
    Answers its id, or no row when there is none (the caller then inserts it). `table`:
    memory_entity (a player's, $user_id given), or official_entity for a designer's.
#}
{% macro merge_memory_entity(table='memory_entity') -%}
    {%- set increment = strength_increment('updated_at', '$at', 'memory_strength_increments') -%}
    {%- set player = 'user_id = $user_id' if table == 'memory_entity'
        else 'user_id is not distinct from $user_id' -%}
    update {{ table }}
    set
        description = case
            when strpos(description, $description) > 0 then description
            -- the old text's newest characters that leave room for the new one, from a
            -- separator on (what follows its first separator is whole parts; none: no room);
            -- no concat_ws: Citus refuses a function not IMMUTABLE in an UPDATE's CASE
            else coalesce(
                nullif(
                    regexp_replace(
                        right(
                            '；' || description,
                            greatest({{ memory_length() }} - length(cast($description as text)), 0)
                        ),
                        '^[^；]*(；|$)',
                        ''
                    ),
                    ''
                )
                || '；',
                ''
            )
            || $description
        end,
        merge_count = coalesce(merge_count, 0)
        + case when strpos(description, $description) > 0 then 0 else 1 end,
        strength = strength + {{ increment | indent(4) }},
        updated_at = greatest(updated_at, $at),
        user_name = coalesce($user_name, user_name)
    where
        scope = $scope
        and agent_id = $agent_id
        -- a player's by equality: Citus routes it to the player's shard (one task)
        and {{ player }}
        and entity_name = $entity_name
        and kind = $kind
        and keyword = $keyword
    returning id
{%- endmacro %}
