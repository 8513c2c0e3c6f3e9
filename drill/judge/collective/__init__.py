"""A collective card in the judge: many ranks, each a process of its own, and the judge that checks them.

The judge's side: `run` judges the card (worlds, cases, timing against NCCL's
own collective); `rank_group` starts the ranks, talks to them and stops them
all, noticing a hang or a death; `check` draws every rank's inputs again and
computes the expected result; `traffic` counts what each rank moved where its
code cannot change the count; `inputs` draws a rank's inputs from its seed
(used on both sides).

A rank's side: `rank_process` is one rank (`python -m
drill.judge.collective.rank_process`, or forked from the judge on a CPU);
`kit` is the tools a harness is given there; `point_to_point` refuses the
built-in collectives and watches each send and receive; `status_slot` is
where a rank writes what it is doing, for the judge to read when it hangs.
"""
