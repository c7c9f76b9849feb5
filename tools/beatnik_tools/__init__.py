"""beatnik's study tools: `beatnik-sweep` runs (or writes Slurm scripts for) a study of many
runs, `beatnik-report` draws the figures of a folder of results files (docs/sweep-and-report.md)."""

__version__ = "0.1.0"


class UsageError(Exception):
    """Bad input the user can fix (a study file, a results file, an option): exit 2, one message."""
