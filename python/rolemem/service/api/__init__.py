"""The HTTP surface, shaped as FastAPI's full-stack template: `routes/` one module per
resource, `deps.py` the dependencies every keyed route shares, `main.py` the wiring."""
