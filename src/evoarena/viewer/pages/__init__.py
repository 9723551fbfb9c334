"""One module per page of `evoarena view`; each gives its `ROUTES`."""
