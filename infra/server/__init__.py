"""The API process put together: the HTTP app (infra/http) wired to the store's adapters, and
the checks of its health that look at the database, the broker and the followers."""
