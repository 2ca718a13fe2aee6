"""Tokens, sealed credential values, secret hashes."""
