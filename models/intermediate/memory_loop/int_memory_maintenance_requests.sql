-- The batch path's maintenance request: the clock of the run (localtimestamp) with the loop
-- settings. MemoryLoop.maintain binds its own `now` and settings in place of this model, so
-- the same database and `now` always give the same archive.
with

settings as (
    select * from {{ ref('memory_loop_settings') }}
),

final as (
    select
        localtimestamp as now,
        cleanup_threshold,
        cleanup_share,
        cleanup_interval_days,
        inactive_days,
        inactive_min_keep
    from settings
)

select * from final
