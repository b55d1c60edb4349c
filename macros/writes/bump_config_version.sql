{#
    The config version, one more (other service processes load the config again).
#}
{% macro bump_config_version() -%}
    insert into rolemem_config_version (id, version)
    values (1, 1)
    on conflict (id) do update set version = rolemem_config_version.version + 1
{%- endmacro %}
