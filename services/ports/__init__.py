"""Ports: what the application layer needs from the outside world, as Protocols, one module per
thing it talks to (the event store, the secrets kept beside it, name lookups, the read side,
workload backends)."""
