"""Text in and out: tokens and keywords (`tokens`), embedders (`embedders`). Clients here know
no store."""
