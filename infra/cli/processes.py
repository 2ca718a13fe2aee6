"""The processes `trainplate serve` starts one at a time and `trainplate dev` starts together."""

PROCESSES = ("api", "relay", "projector", "submitter")
