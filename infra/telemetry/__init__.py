"""What the processes tell operators: traces (OpenTelemetry, exported over OTLP when configured),
Prometheus metric families, and log records as text or JSON. Kept thin: the layers below
know nothing of it, and the store writes a span's context into event metadata as plain text."""
