{#
    The fact attributes and their aliases as the extraction prompt lists them (the seeds the
    store holds, memory_fact_attributes and memory_fact_attribute_aliases): one row per
    attribute, the `one` attributes first.
#}
{% macro listed_fact_attributes() -%}
    select
        attributes.cardinality,
        attributes.attribute,
        list(aliases.alias order by aliases.alias) filter (where aliases.alias is not null)
            as aliases
    from memory_fact_attributes as attributes
    left join memory_fact_attribute_aliases as aliases
        on attributes.attribute = aliases.attribute
    group by attributes.cardinality, attributes.attribute
    order by attributes.cardinality desc, attributes.attribute
{%- endmacro %}
