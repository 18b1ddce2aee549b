"""Writes of the console's own models (people, invitations, audit)."""
