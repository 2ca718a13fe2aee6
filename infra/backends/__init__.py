"""Workload backends: Kubeflow on Kubernetes, local processes, dry run."""
