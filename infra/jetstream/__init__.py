"""NATS JetStream: the relay that publishes the log, its contract, the work queue."""
