"""Commands: each command of ``python -m ultr_core`` as its parser and its run — flags parsed into a task's options,
the task called, its result printed.

Nothing here computes; the tasks (:mod:`ultr_core.tasks`) and the packages below them do.
"""
