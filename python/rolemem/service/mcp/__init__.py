"""MCP: the service's player and designer tools over the Model Context Protocol."""
