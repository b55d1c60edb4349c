"""Request and response models (pydantic): the spec's field names, Chinese ones as aliases.
Every field has a description and an example, every text a maxLength (the service's limits)."""
