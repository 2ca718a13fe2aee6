"""Pure domain: facts, rules and value objects.

Imports only the stdlib and msgspec: no I/O, no clock, no random ids.
"""
