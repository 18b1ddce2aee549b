"""Models arrive with their issue (see docs/ARCHITECTURE.md)."""
