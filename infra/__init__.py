"""Everything that touches the outside world (PostgreSQL, NATS, HTTP, processes) and the wiring."""
