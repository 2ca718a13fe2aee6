"""Followers of the event log: the reader, the leader loop, the runners."""
