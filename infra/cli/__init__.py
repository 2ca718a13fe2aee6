"""The `trainplate` command and what only it runs: `dev`, embedded servers, `events tail`."""
