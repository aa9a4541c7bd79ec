"""Feeds schemas to the OpenAI Agents SDK's strict-schema check.

Reads a JSON list of {"id", "schema"} on stdin and writes a JSON list of
{"id", "strict", "lenient"} on stdout, one per schema in the same order, each mode
{"accepted", "unchanged", "error"}: with `_reject_open_objects=True` ("strict") and without
it ("lenient").

Only the check's own refusal (`UserError`) is a verdict. Anything else (a `TypeError` on a
malformed schema, an API that changed) ends the script with a traceback, so a test never
mistakes a broken oracle for a rejection.
"""

import copy
import json
import sys

from agents.exceptions import UserError
from agents.strict_schema import ensure_strict_json_schema


def judge(schema, reject_open_objects):
    try:
        result = ensure_strict_json_schema(
            copy.deepcopy(schema), _reject_open_objects=reject_open_objects
        )
    except UserError as error:
        return {"accepted": False, "unchanged": False, "error": str(error)}
    return {"accepted": True, "unchanged": result == schema, "error": None}


def main():
    verdicts = []
    for entry in json.load(sys.stdin):
        verdicts.append(
            {
                "id": entry["id"],
                "strict": judge(entry["schema"], True),
                "lenient": judge(entry["schema"], False),
            }
        )
    json.dump(verdicts, sys.stdout)


if __name__ == "__main__":
    main()
