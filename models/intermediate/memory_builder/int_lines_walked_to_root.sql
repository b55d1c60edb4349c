{{ walk_parent_chain(ref('stg_app__lines'), ref('stg_app__saves'), ref('int_save_fork_points')) }}
