{{ find_chain_problems(ref('int_lines_walked_to_root')) }}
