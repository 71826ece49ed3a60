"""The published documents, declared once: each document's TypedDicts and the vocabulary they share.

One module per document (check/1 with its facts and probes, explain/1, verify/1, bench/1, fleet/1, diff/1,
bundle/1 with redactions/1, models, log/1); `vocabulary` holds what they share: the ops, severities, verdicts
and the exit statuses. The modules that make a document, the renderers that show it and the readers that check
it all import its types from here; nothing here imports the rest of mhcdoctor, so every layer can.
mhcdoctor.docschema writes the JSON Schemas (mhcdoctor/schemas/) from these declarations.
"""
