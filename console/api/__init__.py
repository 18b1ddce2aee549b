"""REST endpoints of the console itself (API token login and logout)."""
