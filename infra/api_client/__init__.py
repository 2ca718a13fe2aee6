"""A client of the service's own REST API, for the command line: a login profile kept on
disk, and the requests the `trainplate templates` commands send over HTTP."""
