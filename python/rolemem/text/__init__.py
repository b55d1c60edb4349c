"""Text in and out: tokens and keywords (`tokens`), an event's BM25 postings (`postings`),
embedders (`embedders`). Clients here know no store."""
