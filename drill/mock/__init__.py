"""Mock interviews: `plan` chooses the questions, `run` is the timed state machine,
`record` saves each answer as it is given and feeds the schedule, `report` builds
the finished report and `render` writes it as Markdown or HTML."""
