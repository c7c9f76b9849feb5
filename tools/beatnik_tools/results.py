"""Reading beatnik results files (docs/results.md) and checking them: the schema name, a schema
version this reader knows, and the sections the report draws from."""
import json
import os

from . import UsageError

SCHEMA = "beatnik-results"
SUPPORTED_VERSIONS = {1}
REQUIRED = ("status", "provenance", "config", "decomposition")
REQUIRED_COMPLETED = ("timers", "steps", "communication", "performance")
# A dry run (beatnik --dry-run --np P --results F) plans communication only: no config, timers.
REQUIRED_DRY_RUN = ("status", "provenance", "decomposition", "communication", "dry_run")


def check_results(doc):
    """None when `doc` is a results document this reader understands, else why not."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("schema") != SCHEMA:
        return f"schema is {doc.get('schema')!r}, not {SCHEMA!r} (not a beatnik results file)"
    version = doc.get("schema_version")
    if version not in SUPPORTED_VERSIONS:
        return (f"schema_version {version!r} is not one this reader knows "
                f"({', '.join(map(str, sorted(SUPPORTED_VERSIONS)))})")
    dry = doc.get("status") == "dry-run"
    missing = [k for k in (REQUIRED_DRY_RUN if dry else REQUIRED) if k not in doc]
    if doc.get("status") == "completed":
        missing += [k for k in REQUIRED_COMPLETED if k not in doc]
    if missing:
        return f"missing {', '.join(missing)}"
    if doc.get("status") == "completed":
        regions = doc["timers"].get("regions") if isinstance(doc["timers"], dict) else None
        if not isinstance(regions, dict) or "step" not in regions:
            return "timers.regions.step is missing"
        if not isinstance(doc["steps"].get("seconds"), list):
            return "steps.seconds is missing"
    return None


def read_json(path):
    """The JSON document in `path`; UsageError naming the file when it cannot be read or parsed."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: cannot read: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: not valid JSON ({e})") from None
    return doc


def load_results(path):
    """The document in `path`; UsageError naming the file when it is not a valid results file."""
    doc = read_json(path)
    why = check_results(doc)
    if why:
        raise UsageError(f"{path}: {why}")
    return doc


def is_finished(path):
    """A run is finished when its results file exists, is valid and says it completed."""
    if not os.path.isfile(path):
        return False
    try:
        return load_results(path).get("status") == "completed"
    except UsageError:
        return False
