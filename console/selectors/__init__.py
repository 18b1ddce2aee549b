"""Reads of the console's own models (people, invitations, audit)."""
