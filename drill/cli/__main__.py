"""`python -m drill.cli`: the `drill` command, as the tests and proofs start it in a process of its own."""

from drill.cli import main

raise SystemExit(main())
