"""Tool execution for the agents: argument validation, catalog lookups, signed webhooks."""
