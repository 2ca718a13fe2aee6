"""The HTTP API (Litestar): app factory, controllers, wire schemas and problem details."""
