"""PostgreSQL: the event store and everything written beside its events."""
