"""Schemathesis hooks for scripts/api/fuzz.sh.

`tei` holds GROBID's TEI XML. That it is well-formed TEI is a rule of XML,
which no JSON Schema states: a random string there is schema-valid and
rightly answered 422, which Schemathesis would count as a schema-valid
request rejected. So a generated string in `tei` is replaced with a small
real TEI paper; every other field stays fuzzed, and a `tei` of the wrong
type (a schema violation) is left as generated.
"""

import schemathesis

PAPER = (
    '<TEI xmlns="http://www.tei-c.org/ns/1.0"><teiHeader><fileDesc><titleStmt>'
    "<title>Fuzzed paper</title></titleStmt></fileDesc></teiHeader><text><body>"
    '<div><head n="1">Introduction</head><p>Chunks follow the sections.</p></div>'
    "</body></text></TEI>"
)


@schemathesis.hook
def map_body(ctx, body):
    if isinstance(body, dict) and isinstance(body.get("tei"), str):
        body = dict(body)
        body["tei"] = PAPER
    return body
