"""One router per resource; each route binds the request, calls the store and answers."""
