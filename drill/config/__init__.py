"""The settings file: its keys and checks (settings), and the `drill config` command (cli)."""
