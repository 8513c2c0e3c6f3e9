"""The domain: what the learner knows and what to do about it (predicted recall, the plan to an interview date, calibration of the memory model, fitting it to the learner's record)."""
