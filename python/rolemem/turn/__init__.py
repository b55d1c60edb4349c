"""One turn: the `Companion` assembles a character's reply prompt from every capability
(`companion`)."""
