{#
    The lines a walk of the saves $save_ids reads: their own lines and those of the saves
    they were forked from ($lineage_ids), plus lines of other saves they point at (a parent
    or the tip), so a chain that leaves its save off a fork point is seen and reported.
    list_contains lets DuckDB skip row groups by save_id, as `=` does (`in (select unnest())`
    made every statement a semi-join over the whole table: 2-3x slower on a million lines);
    PostgreSQL reads it as `= any`, and the pointed-at lines as an array (macro in_few_rows):
    both by index, never a scan of the game's whole table. On Citus every read names the
    saves' player $save_user_id (macro player_filter), so the walk, recursion included, runs
    on that player's shard (a fork stays within one player).
#}
{% macro walked_save_lines() -%}
    {%- set player = player_filter('user_id', 'save_user_id') -%}
    select * from line
    where list_contains(cast($lineage_ids as bigint[]), save_id) and {{ player }}
    union all
    select * from line
    where
        not list_contains(cast($lineage_ids as bigint[]), save_id)
        and {{ player }}
        and (
            {{ in_few_rows('id',
                'select parents.parent_line_id from line as parents '
                ~ 'where list_contains(cast($save_ids as bigint[]), parents.save_id) and '
                ~ player_filter('parents.user_id', 'save_user_id')) }}
            or {{ in_few_rows('id',
                'select tips.last_message_id from save as tips '
                ~ 'where list_contains(cast($save_ids as bigint[]), tips.id) and '
                ~ player_filter('tips.user_id', 'save_user_id')) }}
        )
{%- endmacro %}
