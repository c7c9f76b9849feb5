"""The study folder's manifest.json: the study, every job with its command line and status.
Written after every job (to a temporary file, then renamed), so it is never seen half written."""
import json
import os
import time

MANIFEST = "manifest.json"
SCHEMA = "beatnik-study-manifest"


def job_record(job, command):
    return {"id": job.id, "entry": job.entry, "label": job.label, "ranks": job.ranks,
            "repetition": job.repetition, "vary": job.vary, "command": command,
            "results": job.results, "log": job.log, "status": "pending"}


def new_manifest(study, mode, records):
    return {"schema": SCHEMA, "schema_version": 1, "mode": mode,
            "study": {"file": study.path, "name": study.name, "text": study.text},
            "updated_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "jobs": records}


def write_manifest(out_dir, manifest):
    manifest["updated_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    path = os.path.join(out_dir, MANIFEST)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def read_manifest(out_dir):
    """The manifest of a study folder, or None when there is none or it is not ours."""
    path = os.path.join(out_dir, MANIFEST)
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) and doc.get("schema") == SCHEMA else None
