"""Long-running processes: relay, projector, submitter. Each runs until SIGTERM/SIGINT."""
