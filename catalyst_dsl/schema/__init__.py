"""The JSON Schema of playbooks, generated (report/schema.py) and shipped as data."""
