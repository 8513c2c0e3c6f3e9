"""Cards: the schema of each kind, the YAML loader and answer checking."""
