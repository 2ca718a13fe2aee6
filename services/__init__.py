"""Application layer: use cases over the domain, talking to the world only through `ports`."""
