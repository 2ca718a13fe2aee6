"""`python -m infra.cli`: the `trainplate` command."""

from infra.cli.main import main

main()
